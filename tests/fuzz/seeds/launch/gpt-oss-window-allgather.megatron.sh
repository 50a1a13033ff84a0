# pplan 0.1.0 (git 78ec651): Megatron-LM arguments for gpt-oss-20b on 64 x h100-sxm (8 nodes of 8)
# layout tp=1,pp=1,dp=64,cp=1,ep=8,vp=1,mbs=1,gbs=64,sp=off,recompute=none,zero=1,schedule=1f1b
# checked against Megatron-Core 0.16.1 (its TransformerConfig; the newest megatron-core on PyPI) and Megatron-LM's training arguments, by tests/conformance
# predicted 0.352 s per step, 31.2 % MFU, 49.3 GiB per GPU
# pretrain_gpt.py, one process per GPU (torchrun --nproc-per-node 8 --nnodes 8);
# add tokenizer, data, optimizer, learning-rate and checkpoint arguments
# note: the model's attention sinks and attention, MLP or expert biases have no argument here (pplan priced them): these arguments define the model without them
MEGATRON_ARGS=(
  --num-layers 24
  --hidden-size 2880
  --ffn-hidden-size 2880
  --num-attention-heads 64
  --group-query-attention --num-query-groups 8
  --kv-channels 64
  --vocab-size 201088
  --max-position-embeddings 4096
  --position-embedding-type rope --rotary-base 150000
  --rope-type yarn --rotary-scaling-factor 32
  --window-size 127,0
  --window-attn-skip-freq 2
  --norm-epsilon 1e-05
  --hidden-dropout 0 --attention-dropout 0
  --swiglu
  --normalization RMSNorm
  --untie-embeddings-and-output-weights
  --disable-bias-linear
  --num-experts 32 --moe-router-topk 4
  --moe-token-dispatcher-type allgather --moe-grouped-gemm
  --tensor-model-parallel-size 1
  --pipeline-model-parallel-size 1
  --expert-model-parallel-size 8
  --micro-batch-size 1
  --global-batch-size 64
  --seq-length 4096
  --use-distributed-optimizer
  --overlap-grad-reduce
  --overlap-param-gather
  --bf16
)
