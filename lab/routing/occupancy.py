"""Registers, shared memory and resident programs per SM of the partial / single-pass kernel, compiled for sm_90 on the host (no GPU).

    python lab/routing/occupancy.py > lab/routing/occupancy-sm90.json   (Triton 3.6.0, the routing runs' version; about 4 min on 2 cores)

Triton compiles the kernel for GPUTarget("cuda", 90, 32) with its bundled ptxas; cuobjdump -res-usage reads the
registers. Resident programs per SM = min(65536 // (128 threads x registers rounded up to 8), 233472 // shared, 16).
"""
import sys, subprocess, tempfile, os, re, json, pathlib
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
import triton, torch
from triton.compiler import ASTSource
from triton.backends.compiler import GPUTarget
from kernels.decode_attention.kernel_partial import decode_attention_partial_kernel as K
from kernels.decode_attention.launch_config import partial_launch_config, block_d_for, fused_merge_tile
def compile_one(D, G, R=1, finalize=False, splits=2, stages=None, kv_dtype=None):
    cfg = partial_launch_config(D, G*R, torch.bfloat16, kv_dtype=kv_dtype)
    st = stages or cfg.num_stages
    merge = None if finalize else fused_merge_tile(G*R, cfg.block_m, splits, D)
    sig = {}
    kvt = '*bf16' if kv_dtype is None else ('*i8' if kv_dtype==torch.int8 else '*fp8e4nv')
    for n,t in [('q','*bf16'),('k_cache',kvt),('v_cache',kvt),('block_table','*i32'),('visible_tokens','*i32'),('out','*bf16'),('partial_acc','*fp32'),('partial_max','*fp32'),('partial_sum','*fp32'),('counters','*i32'),('qk_scale','fp32')]:
        sig[n]=t
    for n in ['num_splits','num_m_blocks','num_kv_heads','num_q_heads','capacity','num_blocks','stride_qb','stride_qr','stride_qh','stride_kb','stride_kh','stride_ks','stride_vb','stride_vh','stride_vs','stride_ob','stride_or','stride_oh','stride_bt']:
        sig[n]='i32'
    const = dict(ROWS=R, GROUP=G, HEAD_DIM=D, BLOCK_D=block_d_for(D), BLOCK_M=cfg.block_m, BLOCK_N=cfg.block_n, PAGE_SIZE=16,
                 IS_PAGED=False, PREFETCH_PAGES=False, SCALAR_PAGES=True, FINALIZE=finalize, FUSED_COMBINE=merge is not None,
                 MERGE_ROWS=merge[0] if merge else 1, MERGE_SLOTS=merge[1] if merge else 1, SPLIT_MAJOR=True,
                 PDL_TRIGGER=0 if merge else 1, MERGE_TRIGGER=merge is not None, PDL_WAIT=True, DOT_FP64=False, INNER_UNMASKED=True,
                 KV_SCALES=0 if kv_dtype is None else (1 if kv_dtype==torch.int8 else 2))
    sig.update({'k_scale':'*fp32' if kv_dtype is not None else 'constexpr','v_scale':'*fp32' if kv_dtype is not None else 'constexpr','stride_sb':'i32','stride_sh':'i32'})
    for c in const: sig[c]='constexpr'
    if kv_dtype is None: const.update(k_scale=None, v_scale=None)
    src = ASTSource(fn=K, signature=sig, constexprs={(K.arg_names.index(k),):v for k,v in const.items()})
    ck = triton.compile(src, target=GPUTarget('cuda',90,32), options=dict(num_warps=cfg.num_warps, num_stages=st))
    with tempfile.NamedTemporaryFile(suffix='.cubin',delete=False) as f: f.write(ck.asm['cubin']); p=f.name
    out = subprocess.run([os.path.join(os.path.dirname(triton.__file__),'backends/nvidia/bin/cuobjdump'),'-res-usage',p],capture_output=True,text=True).stdout
    regs = int(re.search(r"REG:(\d+)",out).group(1)); stack=re.search(r"STACK:(\d+)",out).group(1); local=re.search(r"LOCAL:(\d+)",out).group(1)
    return dict(D=D,G=G,R=R,fin=finalize,st=st,bm=cfg.block_m,bn=cfg.block_n,warps=cfg.num_warps,shared=ck.metadata.shared,regs=regs,stack=int(stack),local=int(local))
def resident(regs, shared, warps):
    per_warp = -(-regs // 8) * 8 * 32
    return min(65536 // (per_warp * warps), 233472 // max(shared, 1), 16)


if __name__ == '__main__':
    out = []
    for D in (64, 80, 96, 128, 256):
        for G in (1, 2, 4, 8, 12, 16):
            for fin, splits in [(True, 1), (False, 1), (False, 2), (False, 8), (False, 32), (False, 128)]:
                r = compile_one(D, G, finalize=fin, splits=splits)
                r['splits'] = splits
                r['resident_per_sm'] = resident(r['regs'], r['shared'], r['warps'])
                out.append(r)
    json.dump({'triton': triton.__version__, 'target': 'cuda sm_90', 'configs': out}, sys.stdout, indent=0)
