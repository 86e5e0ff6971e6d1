import sys

from .cli import main

try:
    sys.exit(main())
except OSError as e:   # `measure FILE`: a missing file or a directory (`edgeplan size` says the same its own way)
    print(f"sizebudget: cannot read {e.filename}: {e.strerror or e}", file=sys.stderr)
    sys.exit(2)
except Exception as e:  # noqa: BLE001 - pyelftools' ELFError: `measure` on a file that is not ELF
    print(f"sizebudget: not an ELF file it can read ({type(e).__name__}: {e}); pass a linked binary or library",
          file=sys.stderr)
    sys.exit(2)
