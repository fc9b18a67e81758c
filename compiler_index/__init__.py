"""compiler_index: a tree-sitter index of the compiler's C++, TableGen and Python pipeline, with constraint queries.

The ladder's L4 asks which pass condition, legality check or backend assumption keeps the compiler from doing
better; this package answers from Triton's own source, with file:line citations.

Modules, one concept each:
    sources     which files a build covers (Triton checkout narrowing, the installed package's pipelines)
    fetch       getting Triton's sources (shallow clone of the release branch, or the manual alternative)
    compdb      compilation databases (compile_commands.json): which files libclang parses, with which flags
    extract     extractor registry; extract.cpp / extract.tablegen / extract.pipeline read one file each;
                extract.clang (optional) adds what libclang resolves to extract.cpp's reading
    model       the facts an extractor returns for one file
    store       the SQLite schema (versioned), per-file facts, FTS5 full-text search
    link        derived tables: ops, passes, adders, patterns, which pass registers which pattern
    callgraph   call edges: libclang's resolved callees where there are, else by name, namespace and class
    build       incremental builds by content hash, parallel extraction, progress display
    queries     the query API: pure functions, database path or connection in, dataclasses out
                (a package, one module per kind: passes, ops, gates, diagnostics, calls, fulltext)
    explain     the join with an irscope trajectory: the code of a pass behind its op-count changes
    render      human-readable text for query results
    cli         `compiler-index`
"""
