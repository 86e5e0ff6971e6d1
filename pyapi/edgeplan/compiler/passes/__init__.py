"""IR passes: fold (constant folding), cleanup (Identity/Dropout/dead code), fuse (epilogues, patterns)."""
