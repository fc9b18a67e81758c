"""compiler_index: a tree-sitter index of the compiler's C++, TableGen and Python pipeline, with constraint queries."""
