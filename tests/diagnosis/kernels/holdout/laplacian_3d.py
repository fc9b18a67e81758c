"""7-point Laplacian of a 3-D fp32 grid stored [NZ, NY, pitch] (x fastest), lap = sum of the six neighbours
- 6 u, one program per (y, z) row and block of x, zero outside the grid.

Root cause (narrow-memory-access): the row pitch is a runtime argument (250 elements: the x extent, unpadded),
not a multiple of 4 floats, so no row start, and hence no address of the centre, y or z neighbour loads or of the
store, is provably 16-byte aligned; the compiler caps every access at 32 bits per thread. The x neighbours,
offset by one element, stay 32-bit whatever the pitch.
"""

import triton
import triton.language as tl


@triton.jit
def laplacian_3d_kernel(u_ptr, lap_ptr, nx, ny, nz, pitch, BLOCK_X: tl.constexpr):
    y = tl.program_id(0)
    z = tl.program_id(1)
    x = tl.program_id(2) * BLOCK_X + tl.arange(0, BLOCK_X)
    inside = x < nx
    plane = ny * pitch
    c = u_ptr + z * plane + y * pitch + x
    centre = tl.load(c, mask=inside, other=0.0)
    west = tl.load(c - 1, mask=inside & (x > 0), other=0.0)
    east = tl.load(c + 1, mask=x < nx - 1, other=0.0)
    south = tl.load(c - pitch, mask=inside & (y > 0), other=0.0)
    north = tl.load(c + pitch, mask=inside & (y < ny - 1), other=0.0)
    below = tl.load(c - plane, mask=inside & (z > 0), other=0.0)
    above = tl.load(c + plane, mask=inside & (z < nz - 1), other=0.0)
    lap = west + east + south + north + below + above - 6.0 * centre
    tl.store(lap_ptr + z * plane + y * pitch + x, lap, mask=inside)
