"""bench/cnn.py runs (a benchmark, so only its plumbing is tested here): both engines on one model in one
process, the per-round ratios, each engine's speed-up at two threads, and the markdown table."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_cnn_bench_runs_and_writes_its_table(tmp_path):
    md = tmp_path / "cnn.md"
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "cnn.py"), "--models", "tiny", "--threads", "1,2",
                        "--rounds", "2", "--batch", "1", "--warmup", "0", "--markdown", str(md)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "tiny" in r.stdout and "ratio" in r.stdout and "speed-up over 1 thread" in r.stdout
    assert "fastest calls" in r.stdout
    table = md.read_text()
    assert "| tiny | 1 |" in table and "| tiny | 2 |" in table and "ISA" in table
    assert "ratio of the fastest calls" in table


def test_cnn_bench_refuses_an_unknown_model():
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "cnn.py"), "--models", "nosuchnet"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "unknown model 'nosuchnet'" in r.stderr


def test_layers_and_winograd_benches_run(tmp_path):
    import onnx
    from conftest import zoo
    path = tmp_path / "tiny.onnx"
    onnx.save(zoo().build("tiny"), path)
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "layers.py"), str(path), "--runs", "2", "--top", "2"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "convolutions: edgeplan" in r.stdout and "GFLOP/s" in r.stdout
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "winograd.py"), "--channels", "16", "--sizes", "10",
                        "--rounds", "1"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "winograd/packed" in r.stdout, r.stderr[-2000:]
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "layers.py"), str(path), "--shape", "x=oops"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "expected NAME=D0,D1" in r.stderr
