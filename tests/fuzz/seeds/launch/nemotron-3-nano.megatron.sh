# pplan 0.1.0 (git 78ec651): Megatron-LM arguments for NVIDIA-Nemotron-3-Nano-30B-A3B on 16 x h100-sxm (2 nodes of 8)
# layout tp=2,pp=1,dp=8,cp=1,ep=8,vp=1,mbs=1,gbs=128,sp=on,recompute=none,zero=1,schedule=1f1b
# checked against Megatron-Core 0.16.1 (its TransformerConfig; the newest megatron-core on PyPI) and Megatron-LM's training arguments, by tests/conformance
# predicted 5.764 s per step, 25.3 % MFU, 62.9 GiB per GPU
# pretrain_gpt.py, one process per GPU (torchrun --nproc-per-node 8 --nnodes 2);
# add tokenizer, data, optimizer, learning-rate and checkpoint arguments
# note: a hybrid stack of one-block layers (Nemotron-H): Megatron-LM trains it with pretrain_mamba.py, which takes these arguments and --hybrid-override-pattern
MEGATRON_ARGS=(
  --num-layers 52
  --hidden-size 2688
  --ffn-hidden-size 1856
  --num-attention-heads 32
  --group-query-attention --num-query-groups 2
  --kv-channels 128
  --vocab-size 131072
  --hybrid-override-pattern MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME
  --mamba-num-heads 64 --mamba-head-dim 64 --mamba-num-groups 8 --mamba-state-dim 128
  --max-position-embeddings 8192
  --position-embedding-type none
  --norm-epsilon 1e-05
  --hidden-dropout 0 --attention-dropout 0
  --squared-relu
  --normalization RMSNorm
  --untie-embeddings-and-output-weights
  --disable-bias-linear
  --num-experts 128 --moe-router-topk 6
  --moe-token-dispatcher-type alltoall --moe-grouped-gemm
  --moe-ffn-hidden-size 1856
  --moe-shared-expert-intermediate-size 3712
  --tensor-model-parallel-size 2
  --pipeline-model-parallel-size 1
  --expert-model-parallel-size 8
  --micro-batch-size 1
  --global-batch-size 128
  --seq-length 8192
  --sequence-parallel
  --use-distributed-optimizer
  --overlap-grad-reduce
  --overlap-param-gather
  --tp-comm-overlap
  --bf16
)
