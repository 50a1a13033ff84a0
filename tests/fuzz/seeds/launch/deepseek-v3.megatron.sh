# WARNING: this layout does not fit: it needs 71.5 GiB per GPU, has 71.3 GiB; it will run out of memory as it stands
# pplan 0.1.0 (git e0e74dc): Megatron-LM arguments for deepseek-v3 on 1024 x h100-sxm (128 nodes of 8)
# layout tp=2,pp=16,dp=32,cp=1,ep=32,vp=1,mbs=1,gbs=4096,sp=on,recompute=none,zero=1,schedule=1f1b,pp_first=3,pp_last=2
# predicted 22.060 s per step, 21.1 % MFU, 71.5 GiB per GPU
# pretrain_gpt.py, one process per GPU (torchrun --nproc-per-node 8 --nnodes 128);
# add tokenizer, data, optimizer, learning-rate and checkpoint arguments
MEGATRON_ARGS=(
  --num-layers 61
  --hidden-size 7168
  --ffn-hidden-size 18432
  --num-attention-heads 128
  --kv-channels 192
  --vocab-size 129280
  --max-position-embeddings 4096
  --position-embedding-type rope --rotary-base 10000
  --rope-type yarn --rotary-scaling-factor 40
  --norm-epsilon 1e-06
  --hidden-dropout 0 --attention-dropout 0
  --swiglu
  --normalization RMSNorm
  --untie-embeddings-and-output-weights
  --disable-bias-linear
  --multi-latent-attention --kv-lora-rank 512 --qk-head-dim 128 --qk-pos-emb-head-dim 64 --v-head-dim 128
  --q-lora-rank 1536
  --num-experts 256 --moe-router-topk 8
  --moe-token-dispatcher-type alltoall --moe-grouped-gemm
  --moe-ffn-hidden-size 2048
  --moe-shared-expert-intermediate-size 2048
  --moe-layer-freq "([0]*3+[1]*58)"
  --tensor-model-parallel-size 2
  --pipeline-model-parallel-size 16
  --expert-model-parallel-size 32
  --decoder-first-pipeline-num-layers 3
  --decoder-last-pipeline-num-layers 2
  --micro-batch-size 1
  --global-batch-size 4096
  --seq-length 4096
  --sequence-parallel
  --use-distributed-optimizer
  --overlap-grad-reduce
  --overlap-param-gather
  --tp-comm-overlap
  --bf16
)
