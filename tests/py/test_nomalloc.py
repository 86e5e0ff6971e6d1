"""The runtime library must never touch the heap: no reference to any allocator symbol."""
from pathlib import Path

import edgeplan
from elftools.elf.elffile import ELFFile

HEAP = {"malloc", "calloc", "realloc", "free", "aligned_alloc", "posix_memalign", "memalign", "valloc",
        "pvalloc", "reallocarray", "strdup", "strndup", "mmap", "sbrk", "brk"}


def _undefined_symbols(path: Path) -> set:
    with open(path, "rb") as f:
        elf = ELFFile(f)
        syms = elf.get_section_by_name(".dynsym")
        return {s.name.split("@")[0] for s in syms.iter_symbols()
                if s["st_shndx"] == "SHN_UNDEF" and s.name}


def test_runtime_library_has_no_heap_calls():
    lib = Path(edgeplan.__file__).parent / "_lib" / "libedgeplan.so"
    assert lib.is_file(), lib
    undefined = _undefined_symbols(lib)
    assert "memcpy" in undefined          # the check reads real imports
    assert not (undefined & HEAP), sorted(undefined & HEAP)
