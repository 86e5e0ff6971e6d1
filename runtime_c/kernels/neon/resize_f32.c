/* NEON RESIZE variant TABLE: kernels/resize_tmpl.h (the x86 kernel runs the same template). */
#include "neon.h"
#include "resize_tmpl.h"
