"""Model paths through the library's bounded reader (issue 56, defect 7): /dev/zero is refused
at once, as the CLI refuses it, instead of read until memory runs out (each case in a child
process under a 1 GiB address-space cap and a timeout, so the unbounded read this replaced
fails the test rather than the machine); a directory and a NUL byte are named; a FIFO fed once
is read once."""
import os
import resource
import subprocess
import sys
import threading

import pytest

CAP = 1 << 30  # [bytes] address space of the child


def run_child(hb, code):
    """`code` in a fresh interpreter with the library under test, memory capped."""
    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))
    prog = ("import sys, hinesbatch as hb\n"
            f"hb.load_library({hb.library_path()!r})\n"
            "try:\n" + "".join("    " + line + "\n" for line in code.splitlines()) +
            "except (hb.HinesbatchError, ValueError) as err:\n"
            "    print('refused:', err)\n    sys.exit(3)\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True,
                          timeout=60, preexec_fn=cap, env=env)


def test_dev_zero_is_refused_at_once(hb):
    done = run_child(hb, "hb.run('/dev/zero')")
    assert done.returncode == 3, (done.returncode, done.stdout, done.stderr[-2000:])
    assert "/dev/zero: a character device; expected a model file" in done.stdout


def test_endless_pipe_of_zeros_is_refused_at_its_first_nul(hb, tmp_path):
    fifo = tmp_path / "zeros"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"cat /dev/zero > '{fifo}'"])
    try:
        done = run_child(hb, f"hb.Model({str(fifo)!r})")
    finally:
        writer.kill()
        writer.wait()
    assert done.returncode == 3, (done.returncode, done.stdout, done.stderr[-2000:])
    assert "a NUL byte at offset 0: binary, not JSON text" in done.stdout


def test_directory_and_nul_byte_are_named(hb, tmp_path):
    with pytest.raises(hb.HinesbatchError, match="is a directory; expected a model file"):
        hb.Model(str(tmp_path))
    path = tmp_path / "nul.json"
    path.write_bytes(b'{"t_stop": 1,\0}')
    with pytest.raises(hb.HinesbatchError, match="a NUL byte at offset 13"):
        hb.Model(str(path))
    path.write_bytes(b'{"t_stop": 1, "name": "\xff"}')
    with pytest.raises(ValueError, match="byte 23 is not UTF-8"):
        hb.Model(str(path))


def test_fifo_fed_once(hb, root, tmp_path):
    model_path = os.path.join(root, "examples", "ball_and_stick.json")
    with open(model_path, encoding="utf-8") as f:
        text = f.read()
    fifo = tmp_path / "model"
    os.mkfifo(fifo)
    def feed():
        with open(fifo, "w", encoding="utf-8") as f:
            f.write(text)
    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    model = hb.Model(str(fifo), base_dir=os.path.dirname(model_path))
    writer.join(10)
    assert model.data == hb.Model(model_path).data
