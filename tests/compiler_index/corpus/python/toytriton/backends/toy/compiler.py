"""Pass pipeline of the toy backend (test corpus for compiler_index)."""

from toytriton._C.libtoy import ir, passes, toyhw


class ToyBackend:
    def add_stages(self, stages, options, language):
        if language == "triton":
            stages["ttir"] = lambda src, metadata: self.make_ttir(src, metadata, options)
            stages["ttgir"] = lambda src, metadata: self.make_ttgir(src, metadata, options, self.capability)
        stages["llir"] = lambda src, metadata: self.make_llir(src, metadata, options)

    @staticmethod
    def make_ttir(mod, metadata, options):
        pm = ir.pass_manager(mod.context)
        passes.tgpu.add_print_ir(pm, "before")
        pm.run(mod, "make_ttir")
        return mod

    @staticmethod
    def make_ttgir(mod, metadata, options, capability):
        pm = ir.pass_manager(mod.context)
        passes.tgpu.add_vectorize_loads(pm)
        if capability // 10 >= 9:
            passes.tgpu.add_fuse_relayouts(pm, options.rounds, True)
        elif capability // 10 == 8:
            passes.tgpu.add_fuse_relayouts(pm, 1, False)
        for label in options.debug_labels:
            passes.tgpu.add_print_ir(pm, label)
        pm.run(mod, "make_ttgir")
        return mod

    def make_llir(self, src, metadata, options):
        pm = ir.pass_manager(src.context)
        toyhw.passes.hw.add_lower_barriers(pm, options.capability)
        pm.run(src, "make_llir")
        return src
