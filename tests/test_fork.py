"""A process forked after a fit on several OpenMP threads can fit again (GNU libgomp
cannot start threads in such a child: it used to hang there forever, in
dfg_compute_ranks). The child's kernels run on one thread (utils/_common.pyx); the
child's results equal the parent's. Each case runs in a subprocess of its own session
with a timeout, so that a hang fails the test (and is killed) instead of hanging CI."""
import os
import signal
import subprocess
import sys
import textwrap

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = textwrap.dedent("""
    import multiprocessing
    import os

    import numpy as np
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier

    from defrag import DefragModel
    from defrag.utils import _common, threads

    # 17,000 rows: the encoding of the inputs runs on two threads (8,192 rows a thread)
    X, y = make_classification(17000, 6, n_informative=4, random_state=0)
    forest = RandomForestClassifier(3, max_depth=5, random_state=0).fit(X[:2000], y[:2000])


    def fit(_=None):
        model = DefragModel(forest, n_restarts=2, max_rules=4, max_iter=20, subsample=None,
                            random_state=0).fit(X, y)
        return str(model.rules_), _common.fork_thread_cap(), threads.threads_now()


    expected, cap, n = fit()
    assert cap is None and (n == 1 or _common.threads_used())

    # a bare fork: the child fits and reports through a pipe
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            rules, cap, n = fit()
            os.write(write, f"{rules == expected} {cap} {n}".encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    print("fork", os.waitstatus_to_exitcode(status), os.read(read, 100).decode(), flush=True)

    # a pool of forked workers (multiprocessing's default start method on Linux before 3.14)
    with multiprocessing.get_context("fork").Pool(2) as pool:
        results = pool.map_async(fit, range(2)).get(timeout=120)
    print("pool", all(r == expected for r, _, _ in results), results[0][1], flush=True)
""")

# No scikit-learn: which children are capped, by what the parent ran before forking.
CAP_SCRIPT = textwrap.dedent("""
    import os

    import numpy as np

    from defrag.splits import _encoding
    from defrag.utils import _common

    X = np.random.default_rng(0).random((20000, 3))


    def child_cap():
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.write(write, str(_common.fork_thread_cap()).encode())
            os._exit(0)
        os.close(write)
        os.waitpid(pid, 0)
        return os.read(read, 10).decode()


    _encoding.compute_ranks(X, np.arange(4, dtype=np.int64), np.zeros(3), n_threads=1)
    print("one thread", child_cap(), flush=True)
    _encoding.compute_ranks(X, np.arange(4, dtype=np.int64), np.zeros(3), n_threads=2)
    print("two threads", child_cap(), flush=True)
""")


def run_script(script, unset=()):
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for name in unset:
        env.pop(name, None)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=REPO,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the script and its forked children
        out, err = proc.communicate()
        pytest.fail(f"a forked child hung:\n{out}\n{err}")
    assert proc.returncode == 0, err
    return dict(line.rsplit(" ", 1) if line.startswith(("one", "two")) else line.split(" ", 1)
                for line in out.splitlines())


def test_a_process_forked_after_a_fit_fits_again():
    lines = run_script(SCRIPT)
    code, same, cap, n = lines["fork"].split()
    assert (code, same) == ("0", "True"), lines  # finished, with the parent's rules
    assert cap == "1" or cap == "None" and n == "1", lines  # a parent on one core started no pool
    assert lines["pool"].split()[0] == "True", lines


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2 if hasattr(os, "sched_getaffinity") else True,
                    reason="a kernel runs on at most the cores there are: two threads need two")
def test_only_children_of_a_process_that_ran_threads_run_on_one():
    # a kernel takes at most OpenMP's limit (a Dask LocalCluster earlier in this process
    # leaves OMP_NUM_THREADS=1 in os.environ): the script's kernel must be free to take two
    lines = run_script(CAP_SCRIPT, unset=("OMP_NUM_THREADS",))
    assert lines == {"one thread": "None", "two threads": "1"}, lines
