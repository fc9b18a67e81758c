"""What-if compiles: the captured kernel compiled again with one condition changed, to confirm a diagnosis.

An L4 diagnosis says "the compiler did not do X because condition C did not hold". `whatif` makes C hold (an
argument attribute such as `tt.divisibility = 16`, a compile option, a constexpr, a dot's input precision) and
recompiles, capturing
every pass, so the claim becomes an experiment: X appears, or it does not. docs/whatif.md has a worked example.

    import irscope
    from irscope.whatif import whatif
    w = whatif(irscope.load("dump"), arg_attrs=["lda:divisibility=16"], out_dir="dump-whatif")
    print(w.describe(), w.change("ptx.mem.cp_async"))
"""

from irscope.whatif.edits import ArgAttr, ConstexprEdit, DotPrecision, OptionEdit, WhatIfError
from irscope.whatif.run import WhatIf, whatif

__all__ = ["ArgAttr", "ConstexprEdit", "DotPrecision", "OptionEdit", "WhatIf", "WhatIfError", "whatif"]
