# pplan 0.1.0 (git 3c813a6): Megatron-Bridge recipe override for qwen3-30b-a3b on 32 x h100-sxm (4 nodes of 8)
# layout tp=1,pp=1,dp=32,cp=1,ep=8,vp=1,mbs=1,gbs=256,sp=off,recompute=full,zero=3,schedule=1f1b,recompute_layers=4
# checked against Megatron-Bridge 0.3.1's source (the newest megatron-bridge on PyPI: the recipe function, the ConfigContainer's sections and their fields, CommOverlapConfig's, the mixed-precision names), by tests/conformance; Megatron-Bridge itself does not import without Transformer Engine, which does not install without a GPU
# predicted 3.228 s per step, 28.6 % MFU, 40.9 GiB per GPU
# note: mtp_num_layers = None: pplan prices no multi-token-prediction layer, which DeepSeek-V3's and Qwen3-Next's recipes add
# note: what the recipe sets and pplan does not price (CUDA graphs, token drop, forced load balancing) stays as the recipe has it
from megatron.bridge.recipes.qwen import qwen3_30b_a3b_pretrain_config
from megatron.bridge.training.comm_overlap import CommOverlapConfig
from megatron.bridge.training.gpt_step import forward_step
from megatron.bridge.training.mixed_precision import bf16_mixed
from megatron.bridge.training.pretrain import pretrain

cfg = qwen3_30b_a3b_pretrain_config()
cfg.model.tensor_model_parallel_size = 1
cfg.model.pipeline_model_parallel_size = 1
cfg.model.virtual_pipeline_model_parallel_size = None
cfg.model.context_parallel_size = 1
cfg.model.expert_model_parallel_size = 8
cfg.model.expert_tensor_parallel_size = 1
cfg.model.pipeline_model_parallel_layout = None
cfg.model.num_layers_in_first_pipeline_stage = None
cfg.model.num_layers_in_last_pipeline_stage = None
cfg.model.account_for_embedding_in_pipeline_split = False
cfg.model.account_for_loss_in_pipeline_split = False
cfg.model.sequence_parallel = False
cfg.train.micro_batch_size = 1
cfg.train.global_batch_size = 256
cfg.dataset.seq_length = 4096
cfg.model.seq_length = 4096
cfg.model.moe_token_dispatcher_type = "alltoall"
cfg.model.moe_grouped_gemm = True
cfg.model.mtp_num_layers = None
cfg.model.recompute_granularity = "full"
cfg.model.recompute_method = "block"
cfg.model.recompute_num_layers = 4
cfg.optimizer.use_distributed_optimizer = True
cfg.ddp.use_distributed_optimizer = True
cfg.ddp.use_megatron_fsdp = True
cfg.ddp.data_parallel_sharding_strategy = "optim_grads_params"
cfg.model.gradient_accumulation_fusion = False
cfg.ddp.overlap_grad_reduce = True
cfg.ddp.overlap_param_gather = True
cfg.mixed_precision = bf16_mixed()
cfg.mixed_precision.grad_reduce_in_fp32 = False
cfg.comm_overlap = CommOverlapConfig(tp_comm_overlap=False, overlap_grad_reduce=True, overlap_param_gather=True)

# torchrun --nproc-per-node 8 --nnodes 4 THIS_FILE.py
if __name__ == "__main__":
    pretrain(cfg, forward_step)
