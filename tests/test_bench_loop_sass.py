"""Counting the instructions of a kernel's loops from its disassembly, without a GPU."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from validation.bench.loop_sass import loop_bodies, parse_shape

SASS = """
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/                   S2R R0, SR_TID.X ;
.L_x_0:
        /*0020*/                   LDS R2, [R0] ;
        /*0030*/                   HMMA.16816.F32.BF16 R4, R8, R12, R4 ;
        /*0040*/              @!P0 FADD R2, R2, 1 ;
.L_x_1:
        /*0050*/                   ISETP.GE.AND P1, PT, R2, R3, PT ;
        /*0060*/               @P1 BRA `(.L_x_1) ;
        /*0070*/                   IADD3 R0, R0, 0x1, RZ ;
        /*0080*/               @P0 BRA `(.L_x_0) ;
        /*0090*/                   BRA `(.L_x_2) ;
.L_x_2:
        /*00a0*/                   EXIT ;
"""


def test_each_backward_branch_closes_a_loop_counted_by_opcode():
    outer, inner = loop_bodies(SASS)
    assert outer == {"LDS": 1, "HMMA": 1, "FADD": 1, "ISETP": 1, "BRA": 2, "IADD3": 1}
    assert inner == {"ISETP": 1, "BRA": 1}


def test_a_forward_branch_is_no_loop():
    assert loop_bodies(SASS.replace("@P0 BRA `(.L_x_0)", "NOP").replace("@P1 BRA `(.L_x_1)", "NOP")) == []


def test_a_shape_is_five_or_six_integers():
    shape = parse_shape("1,32,8,128,4096")
    assert (shape.batch, shape.num_q_heads, shape.num_kv_heads, shape.head_dim, shape.context, shape.rows) == (
        1, 32, 8, 128, 4096, 1)
    assert parse_shape("1,24,4,256,2048,16").rows == 16
    for bad in ("1,32,eight", "1,32,8,128"):
        with pytest.raises(ValueError, match="B,Hq,Hkv,D,S"):
            parse_shape(bad)


def test_the_command_compiles_the_split_launch_and_counts_its_kv_loop(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = tmp_path / "loops.json"
    done = subprocess.run([sys.executable, "-m", "validation.bench.loop_sass", "--shape", "1,8,2,64,256",
                           "--formats", "int8", "--out", str(out)], capture_output=True, text=True, env=env,
                          cwd=Path(__file__).resolve().parent.parent, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "| int8 | default |" in done.stdout
    import json

    row = json.loads(out.read_text())["rows"][0]
    loops = [lp for lp in row["loops"] if lp["opcodes"].get("HMMA")]
    assert row["block_n"] == 128 and loops and max(lp["instructions"] for lp in loops) > 100
