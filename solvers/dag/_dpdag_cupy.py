"""CuPy path for batched DP-DAG sampling (imported lazily; never at package import).

Noise is drawn on the device (a cupy Generator seeded from the user's ``rng``), the orders
come from one batched ``argsort`` and one fused elementwise kernel writes the DAGs:
``A[b, i, j] = pos[b, i] < pos[b, j] and u[b, i, j] < q[i, j]``. Reproducible for a seed,
but not the same draws as the host paths.
"""
import cupy

from .permutations import hungarian

_dag_kernel = cupy.ElementwiseKernel(
    "raw int64 pos, raw T q, float32 u, int64 d", "bool a",
    """
    long long dd = d * d;
    long long b = i / dd;
    long long r = i - b * dd;
    long long row = r / d;
    long long col = r - row * d;
    a = (pos[b * d + row] < pos[b * d + col]) && ((T)u < q[r]);
    """,
    "dpdag_dag_kernel")


def sample_dags(model, n, rng, be, chunk=None):
    """``n`` DAGs of ``model`` on the GPU; returns (A bool (n, d, d), orders (n, d))."""
    xp = be.xp
    d = model.d
    gen = cupy.random.default_rng(int(rng.integers(2**63)))
    theta = cupy.asarray(be.to_device(model.order_logits))
    q = cupy.ascontiguousarray(cupy.asarray(be.to_device(model.edge_probs)))
    chunk = chunk or max(1, (1 << 28) // (4 * d * d))
    As, Os = [], []
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        if model.order == "softsort":
            g = -cupy.log(-cupy.log(gen.random((m, d), dtype=cupy.float64)))
            orders = cupy.argsort(-(theta[None, :] + g), axis=1)
        else:
            g = -cupy.log(-cupy.log(gen.random((m, d, d), dtype=cupy.float64)))
            orders = cupy.argmax(hungarian(xp.asarray(theta[None] + g)), axis=-1)
        orders = cupy.ascontiguousarray(orders.astype(cupy.int64))
        pos = cupy.argsort(orders, axis=1).astype(cupy.int64)
        u = gen.random((m, d, d), dtype=cupy.float32)
        A = cupy.empty((m, d, d), dtype=cupy.bool_)
        _dag_kernel(pos, q, u, d, A)
        As.append(A)
        Os.append(orders)
    A = As[0] if len(As) == 1 else cupy.concatenate(As)
    orders = Os[0] if len(Os) == 1 else cupy.concatenate(Os)
    return be.to_input(A), be.to_input(orders)
