# WARNING: this layout does not fit: it needs 93.4 GiB per GPU, has 71.3 GiB; it will run out of memory as it stands
# pplan 0.1.0 (git 78ec651): Megatron-LM arguments for Qwen3-Next-80B-A3B on 16 x h100-sxm (2 nodes of 8)
# layout tp=2,pp=2,dp=4,cp=1,ep=4,vp=1,mbs=1,gbs=128,sp=on,recompute=none,zero=1,schedule=1f1b
# checked against Megatron-Core 0.16.1 (its TransformerConfig; the newest megatron-core on PyPI) and Megatron-LM's training arguments, by tests/conformance
# predicted 7.686 s per step, 22.7 % MFU, 93.4 GiB per GPU
# pretrain_gpt.py, one process per GPU (torchrun --nproc-per-node 8 --nnodes 2);
# add tokenizer, data, optimizer, learning-rate and checkpoint arguments
MEGATRON_ARGS=(
  --num-layers 48
  --hidden-size 2048
  --ffn-hidden-size 5120
  --num-attention-heads 16
  --group-query-attention --num-query-groups 2
  --kv-channels 256
  --vocab-size 151936
  --experimental-attention-variant gated_delta_net --linear-attention-freq 4 --linear-num-key-heads 16 --linear-num-value-heads 32 --linear-key-head-dim 128 --linear-value-head-dim 128 --linear-conv-kernel-dim 4
  --attention-output-gate
  --max-position-embeddings 8192
  --position-embedding-type rope --rotary-base 10000000
  --rotary-percent 0.25
  --norm-epsilon 1e-06
  --hidden-dropout 0 --attention-dropout 0
  --swiglu
  --normalization RMSNorm
  --untie-embeddings-and-output-weights
  --disable-bias-linear
  --qk-layernorm
  --num-experts 512 --moe-router-topk 10
  --moe-token-dispatcher-type alltoall --moe-grouped-gemm
  --moe-ffn-hidden-size 512
  --moe-shared-expert-intermediate-size 512
  --moe-shared-expert-gate
  --tensor-model-parallel-size 2
  --pipeline-model-parallel-size 2
  --expert-model-parallel-size 4
  --micro-batch-size 1
  --global-batch-size 128
  --seq-length 8192
  --sequence-parallel
  --use-precision-aware-optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16
  --use-distributed-optimizer
  --overlap-grad-reduce
  --overlap-param-gather
  --tp-comm-overlap
  --bf16
)
