"""The location parsers of irscope/parse/ on a few lines of IR per tricky case.

Each case is IR as Triton 3.6 prints it (trimmed to the lines that matter; paths shortened), fed to a pure parsing
function; the expected frames are derived in the comments. K is the kernel's file, S a `tl.*` helper's file.
"""

from __future__ import annotations

from irscope.parse import LocationTable, parse_amdgcn, parse_mlir, parse_ptx, parse_sass
from irscope.parse.llvmir import parse_llvm_ir
from irscope.parse.locations import TRITON_DIR, UNKNOWN, Frame, Location

K = "/src/kern.py"
S_DIR = "/site-packages/triton/language"
S = f"{S_DIR}/standard.py"


# --- MLIR locations -------------------------------------------------------------------------------------------

# The argmax kernel after inlining (ttir-inline), aliases as the printer emits them: tl.argmax (line 38 of the
# kernel, named `i1`) calls the helper at standard.py:198, which reaches an op with no location of its own.
CALLSITES = f"""\
#loc1 = loc(unknown)
#loc10 = loc("{K}":37:19)
#loc13 = loc("{S}":198:26)
#loc14 = loc("{K}":38:19)
#loc41 = loc("first"(#loc10))
#loc42 = loc("i1"(#loc14))
#loc54 = loc(callsite(#loc1 at #loc41))
#loc55 = loc(callsite(#loc13 at #loc42))
#loc60 = loc(callsite(#loc1 at #loc55))
"""


def test_alias_resolves_to_its_file_line_col():
    assert LocationTable(CALLSITES).resolve("#loc10").frames == (Frame(K, 37, 19),)


def test_name_loc_of_an_alias_keeps_the_name_and_the_aliased_frame():
    # #loc41 = "first"(#loc10) → the frame of #loc10, named "first"
    loc = LocationTable(CALLSITES).resolve("#loc41")
    assert (loc.frames, loc.name) == ((Frame(K, 37, 19),), "first")


def test_callsite_lists_callee_then_caller():
    # #loc55 = callsite(#loc13 at #loc42): callee S:198:26 first, then the caller #loc42 → K:38:19 ("i1")
    loc = LocationTable(CALLSITES).resolve("#loc55")
    assert loc.frames == (Frame(S, 198, 26), Frame(K, 38, 19))
    assert loc.name == "i1"  # the callee has no name: the caller's
    assert loc.user_frame(K) == Frame(K, 38, 19)
    assert loc.user_frame() == Frame(K, 38, 19)  # without the kernel's file: the innermost frame outside Triton


def test_a_package_beside_triton_whose_name_starts_with_triton_is_not_triton():
    """triton_kernels (a package of its own, installed beside triton) holds user code: its frames are not
    Triton's, though its folder's name starts with Triton's."""
    helper = Frame(f"{TRITON_DIR}/language/core.py", 10, 1)
    beside = Frame(f"{TRITON_DIR}_kernels/matmul.py", 42, 5)
    loc = Location((helper, beside, Frame(K, 7, 3)))
    assert helper.in_triton and not beside.in_triton
    assert loc.user_frame() == beside


def test_callsite_of_unknown_at_an_alias_of_a_callsite():
    # #loc60 = callsite(#loc1 at #loc55): #loc1 is unknown (no frames), so only #loc55's chain remains
    loc = LocationTable(CALLSITES).resolve("#loc60")
    assert loc.frames == (Frame(S, 198, 26), Frame(K, 38, 19))
    assert loc.name == "i1"
    # #loc54 = callsite(#loc1 at #loc41): nothing from the callee, the caller's frame and name
    loc = LocationTable(CALLSITES).resolve("#loc54")
    assert (loc.frames, loc.name) == ((Frame(K, 37, 19),), "first")


def test_inline_nested_callsites_keep_innermost_first():
    # callsite(callsite(a at b) at c) → a, b, c; the name's quoted " at " is not the separator
    body = f'callsite(callsite("{S}":149:24 at "{S}":160:59) at "x at y"("{K}":38:19))'
    loc = LocationTable("").resolve(body)
    assert loc.frames == (Frame(S, 149, 24), Frame(S, 160, 59), Frame(K, 38, 19))
    assert loc.name == "x at y"


def test_name_locs_with_and_without_a_child():
    table = LocationTable("")
    loc = table.resolve(f'"acc"("{K}":20:8)')
    assert (loc.frames, loc.name) == ((Frame(K, 20, 8),), "acc")
    bare = table.resolve('"acc"')  # a name with no position: named but not known
    assert (bare.frames, bare.name, bare.known) == ((), "acc", False)


def test_file_line_col_range_keeps_its_start():
    # newer MLIR prints ranges as "file":line:col to line:col; the start is the position
    assert LocationTable("").resolve(f'"{K}":5:3 to 5:9').frames == (Frame(K, 5, 3),)


# The LLVM-dialect module after enable-line-info: every location fused with debug-info metadata, aliased.
FUSED = f"""\
#loc9 = loc("{S}":191:40)
#loc10 = loc("{K}":37:19)
#loc41 = loc("first"(#loc10))
#loc54 = loc(fused<#di_lexical_block_file>[#loc9])
#loc55 = loc(fused<#di_lexical_block_file1>[#loc41])
#loc69 = loc(callsite(#loc54 at #loc55))
"""


def test_fused_with_aliased_metadata_and_callsite_of_fused():
    table = LocationTable(FUSED)
    assert table.resolve("#loc54").frames == (Frame(S, 191, 40),)
    # #loc69 = callsite(#loc54 at #loc55) → S:191:40, then #loc55 → #loc41 → K:37:19 named "first"
    loc = table.resolve("#loc69")
    assert (loc.frames, loc.name) == ((Frame(S, 191, 40), Frame(K, 37, 19)), "first")


def test_fused_with_inline_metadata_holding_brackets():
    # Printed without aliases, the metadata is inline and its `distinct[0]` holds a bracket of its own; the
    # locations are the bracketed list after the whole <…> (parser bug: it took the first '[' and lost them).
    body = f'fused<#llvm.di_subprogram<id = distinct[0]<>, name = "k", line = 31>>[#loc10, "{S}":1:2]'
    assert LocationTable(FUSED).resolve(body).frames == (Frame(K, 37, 19), Frame(S, 1, 2))


def test_fused_list_drops_repeated_frames():
    body = f'fused["{K}":1:2, "{S}":3:4, "{K}":1:2]'
    assert LocationTable("").resolve(body).frames == (Frame(K, 1, 2), Frame(S, 3, 4))


def test_alias_cycle_is_unknown_not_a_recursion_error():
    table = LocationTable("#loc1 = loc(#loc2)\n#loc2 = loc(#loc1)\n")
    assert table.resolve("#loc1") is UNKNOWN
    assert table.resolve("#loc7") is UNKNOWN  # an alias the module never defines


# A TTIR module: aliases after the module (where Triton prints most of them), a generic-form op with a region
# whose location is on its closing line, and a constant hoisted to loc(unknown).
MODULE = f"""\
#loc = loc("{K}":3:0)
module {{
  tt.func public @k(%x: !tt.ptr<f32> loc("x"(#loc)), %v: tensor<128xf32> loc("v"(#loc))) {{
    %c0 = arith.constant 0 : i32 loc(#loc1)
    %pid = tt.get_program_id x : i32 loc(#loc2)
    %s = arith.addi %pid, %c0 : i32 loc(#loc3)
    %r = "tt.reduce"(%v) <{{axis = 0 : i32}}> ({{
    ^bb0(%a: f32 loc(unknown), %b: f32 loc(unknown)):
      %m = arith.maxnumf %a, %b : f32 loc(#loc5)
      tt.reduce.return %m : f32 loc(#loc5)
    }}) : (tensor<128xf32>) -> f32 loc(#loc4)
    tt.return loc(#loc6)
  }} loc(#loc)
}} loc(#loc)
#loc1 = loc(unknown)
#loc2 = loc("{K}":5:24)
#loc3 = loc("s"(#loc2))
#loc4 = loc("{K}":6:20)
#loc5 = loc(callsite("{S}":170:27 at #loc4))
#loc6 = loc("{K}":7:4)
"""


def test_parse_mlir_resolves_trailing_closing_line_and_inferred_locations():
    ops = {op.name: op for op in parse_mlir(MODULE).ops}
    assert ops["tt.get_program_id"].location.frames == (Frame(K, 5, 24),)
    # the constant's own loc is unknown; its one user (arith.addi, "s" at #loc2) gives K:5:24, marked inferred
    assert ops["arith.constant"].location.frames == (Frame(K, 5, 24),)
    assert ops["arith.constant"].inferred
    assert not ops["arith.addi"].inferred and ops["arith.addi"].location.name == "s"
    # the region op's location follows its closing `})` line: #loc4 → K:6:20
    assert ops["tt.reduce"].location.frames == (Frame(K, 6, 20),)
    assert ops["tt.reduce"].tail.startswith("}) : (tensor<128xf32>) -> f32")
    # inside the region: the helper's line, called from the reduce's line
    assert ops["arith.maxnumf"].location.frames == (Frame(S, 170, 27), Frame(K, 6, 20))
    assert ops["arith.maxnumf"].parent is ops["tt.reduce"]
    assert ops["tt.func"].location.frames == (Frame(K, 3, 0),)


# --- PTX, SASS, AMDGCN line tables ----------------------------------------------------------------------------

# NVPTX prints the .file table after the body; a .loc may carry `function_name …, inlined_at …` after the
# position; `.loc 1 0 0` is code with no source line; a .file may carry a timestamp and size.
PTX = f"""\
.version 8.7
.target sm_90a
.visible .entry k(
	.param .u64 k_param_0
)
{{
	.loc	1 31 0
$L__func_begin0:
	ld.param.b64 	%rd3, [k_param_0];
	.loc	2 191 40, function_name $L__info_string0, inlined_at 1 37 19
	shfl.sync.bfly.b32 	%r1, %r2, 16, 31, -1;
	.loc	1 0 0
	@%p1 st.global.b32 	[%rd3], %r1;
	.loc	3 5 1
	ret;
}}
	.file	1 "{K}"
	.file	2 "{S}", 1700000000, 2048
"""


def test_ptx_loc_through_a_file_table_printed_after_the_body():
    ins = parse_ptx(PTX)
    assert [i.opcode for i in ins] == ["ld.param.b64", "shfl.sync.bfly.b32", "st.global.b32", "ret"]
    assert ins[0].frame == Frame(K, 31, 0)
    # inlined_at names the caller; the instruction keeps the innermost frame (the helper's line), which the
    # signature engine maps to kernel lines through the MLIR call sites
    assert ins[1].frame == Frame(S, 191, 40)
    assert ins[2].frame is None and ins[2].predicated  # line 0: no source line
    assert ins[3].frame is None  # file 3 is not in the table


# nvdisasm -c -g: a `//## File` comment before the instructions it covers; the inline-info form adds the caller.
SASS = f"""\
.text.k:
	//## File "{K}", line 31
        /*0000*/                   LDC R1, c[0x0][0x28] ;
	//## File "{S}", line 191 inlined at "{K}", line 37
        /*0010*/                   SHFL.BFLY PT, R13, R0, 0x10, 0x1f ;
        /*0020*/              @!P0 LDG.E R2, desc[UR8][R4.64] ;
.L_x_0:
	//## File "{K}", line 40
        /*0030*/                   EXIT ;
"""


def test_sass_line_comments_cover_the_following_instructions():
    ins = parse_sass(SASS)
    assert [(i.opcode, i.predicated) for i in ins] == [
        ("LDC", False),
        ("SHFL.BFLY", False),
        ("LDG.E", True),
        ("EXIT", False),
    ]
    # SASS line info has no column: 0; the inlined form's frame is its first (innermost) file and line
    assert [i.frame for i in ins] == [Frame(K, 31, 0), Frame(S, 191, 0), Frame(S, 191, 0), Frame(K, 40, 0)]


# AMDGCN: `.file N "dir" "name"` joins to dir/name; `.loc` flags after the position.
AMDGCN = f"""\
	.file	1 "/src" "kern.py"
	.file	2 "{S}"
	.loc	1 12 5 prologue_end
	global_load_dwordx4 v[0:3], v[4:5], off
	.loc	2 191 40
	v_max_f32_e32 v0, v1, v2
	.loc	1 0 0 is_stmt 0
	s_endpgm
"""


def test_amdgcn_loc_with_directory_and_name_file_entries():
    ins = parse_amdgcn(AMDGCN)
    assert [(i.opcode, i.frame) for i in ins] == [
        ("global_load_dwordx4", Frame(K, 12, 5)),  # "/src" + "kern.py"
        ("v_max_f32_e32", Frame(S, 191, 40)),
        ("s_endpgm", None),  # line 0
    ]


# --- LLVM IR debug locations ----------------------------------------------------------------------------------

# As translate-to-llvm-ir prints the argmax kernel: the helper's lines sit in a DILexicalBlockFile of
# standard.py, inlinedAt chains lead back to the kernel's line.
LLVM_IR = f"""\
define ptx_kernel void @k(ptr addrspace(1) %0) local_unnamed_addr !dbg !4 {{
  %2 = load float, ptr addrspace(1) %0, align 4, !dbg !7
  %3 = tail call float @llvm.maxnum.f32(float %2, float %2), !dbg !19
  %4 = fadd float %3, %3, !dbg !20
  ret void, !dbg !8
}}
!1 = !DIFile(filename: "kern.py", directory: "/src")
!4 = distinct !DISubprogram(name: "k", linkageName: "k", scope: !1, file: !1, line: 31, spFlags: DISPFlagDefinition)
!7 = !DILocation(line: 33, column: 24, scope: !4)
!8 = !DILocation(line: 0, scope: !4)
!14 = !DILocation(line: 191, column: 40, scope: !15, inlinedAt: !17)
!15 = distinct !DILexicalBlockFile(scope: !4, file: !16, discriminator: 0)
!16 = !DIFile(filename: "standard.py", directory: "{S_DIR}")
!17 = !DILocation(line: 37, column: 19, scope: !18)
!18 = distinct !DILexicalBlockFile(scope: !4, file: !1, discriminator: 0)
!19 = !DILocation(line: 170, column: 27, scope: !15, inlinedAt: !14)
!20 = !DILocation(line: 0, scope: !15, inlinedAt: !14)
"""


def test_llvm_ir_inlined_at_chain_innermost_first():
    rows = parse_llvm_ir(LLVM_IR)
    frames = {ins.opcode: fr for ins, fr in rows}
    assert list(frames) == ["load", "call", "fadd", "ret"]  # `tail` is a call marker, not the opcode
    assert frames["load"] == (Frame(K, 33, 24),)  # scope !4 → file !1 → /src/kern.py
    # !19 (S:170:27, block file of standard.py) inlined at !14 (S:191:40) inlined at !17 (K:37:19)
    assert frames["call"] == (Frame(S, 170, 27), Frame(S, 191, 40), Frame(K, 37, 19))
    assert rows[1][0].frame == Frame(S, 170, 27)
    # line 0 is no source position (parser fix: it gave a frame at line 0); the callers it was inlined at remain
    assert frames["fadd"] == (Frame(S, 191, 40), Frame(K, 37, 19))
    assert frames["ret"] == ()
