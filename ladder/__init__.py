"""ladder: the hierarchical diagnosis and optimization loop (L1 pattern triage → L4 compiler source)."""
