# pplan 0.1.0 (git e0e74dc): torchtitan 0.3 launch line for qwen3-30b-a3b on 64 x h100-sxm (8 nodes of 8)
# layout tp=2,pp=1,dp=32,cp=1,ep=8,vp=1,mbs=1,gbs=256,sp=on,recompute=selective,zero=3,schedule=1f1b,etp=1
# predicted 2.406 s per step, 19.2 % MFU, 24.8 GiB per GPU
# run on every node (torchrun's rendezvous: --rdzv-backend c10d --rdzv-endpoint HOST:PORT)
torchrun --nnodes 8 --nproc-per-node 8 -m torchtitan.train \
  --module qwen3 --config qwen3_30b_a3b \
  --training.local_batch_size 1 \
  --training.global_batch_size 256 \
  --training.seq_len 4096 \
  --training.mixed_precision_param bfloat16 --training.mixed_precision_reduce float32 \
  --training.disable_cuda_graphs \
  --parallelism.data_parallel_replicate_degree 1 \
  --parallelism.data_parallel_shard_degree 32 \
  --parallelism.fsdp_reshard_after_forward always \
  --parallelism.tensor_parallel_degree 2 \
  --parallelism.enable_sequence_parallel \
  --parallelism.pipeline_parallel_degree 1 \
  --parallelism.context_parallel_degree 1 \
  --parallelism.expert_parallel_degree 8 \
  --compile.no_enable_async_tensor_parallel \
  activation_checkpoint:selective
