"""06_unified rules that the generic program tests do not cover (no GPU needed)."""
from conftest import load_manifest


def test_manifest_never_oversubscribes():
    """um_oversubscription's test arguments must stay below 1.0 x free GPU memory: a managed
    allocation larger than the GPU can stall a GPU that other people share."""
    for prog in load_manifest():
        for arg in prog.args:
            if arg.startswith("--oversubscribe="):
                factor = float(arg.split("=", 1)[1])
                assert factor < 1.0, f"{prog.name}: {arg} in tests/manifest.txt would oversubscribe the GPU"
