# pplan 0.1.0 (git 3c813a6): Megatron-Bridge recipe override for deepseek-v3 on 1024 x h100-sxm (128 nodes of 8)
# layout tp=2,pp=16,dp=32,cp=1,ep=32,vp=1,mbs=1,gbs=4096,sp=on,recompute=none,zero=1,schedule=1f1b,pp_first=3,pp_last=2,offload=moe_act
# checked against Megatron-Bridge 0.3.1's source (the newest megatron-bridge on PyPI: the recipe function, the ConfigContainer's sections and their fields, CommOverlapConfig's, the mixed-precision names), by tests/conformance; Megatron-Bridge itself does not import without Transformer Engine, which does not install without a GPU
# predicted 18.464 s per step, 25.2 % MFU, 57.7 GiB per GPU
# note: mtp_num_layers = None: pplan prices no multi-token-prediction layer, which DeepSeek-V3's and Qwen3-Next's recipes add
# note: what the recipe sets and pplan does not price (CUDA graphs, token drop, forced load balancing) stays as the recipe has it
import torch
from megatron.bridge.recipes.deepseek import deepseek_v3_pretrain_config
from megatron.bridge.training.comm_overlap import CommOverlapConfig
from megatron.bridge.training.gpt_step import forward_step
from megatron.bridge.training.mixed_precision import bf16_mixed
from megatron.bridge.training.pretrain import pretrain

cfg = deepseek_v3_pretrain_config()
cfg.model.tensor_model_parallel_size = 2
cfg.model.pipeline_model_parallel_size = 16
cfg.model.virtual_pipeline_model_parallel_size = None
cfg.model.context_parallel_size = 1
cfg.model.expert_model_parallel_size = 32
cfg.model.expert_tensor_parallel_size = 2
cfg.model.pipeline_model_parallel_layout = None
cfg.model.num_layers_in_first_pipeline_stage = 3
cfg.model.num_layers_in_last_pipeline_stage = 2
cfg.model.account_for_embedding_in_pipeline_split = False
cfg.model.account_for_loss_in_pipeline_split = False
cfg.model.sequence_parallel = True
cfg.train.micro_batch_size = 1
cfg.train.global_batch_size = 4096
cfg.dataset.seq_length = 4096
cfg.model.seq_length = 4096
cfg.model.moe_token_dispatcher_type = "flex"
cfg.model.moe_flex_dispatcher_backend = "deepep"
cfg.model.moe_grouped_gemm = True
cfg.model.mtp_num_layers = None
cfg.model.recompute_granularity = None
cfg.model.fine_grained_activation_offloading = True
cfg.model.offload_modules = ["moe_act"]
cfg.optimizer.use_precision_aware_optimizer = True
cfg.optimizer.exp_avg_dtype = torch.bfloat16
cfg.optimizer.exp_avg_sq_dtype = torch.bfloat16
cfg.optimizer.use_distributed_optimizer = True
cfg.ddp.use_distributed_optimizer = True
cfg.ddp.overlap_grad_reduce = True
cfg.ddp.overlap_param_gather = True
cfg.mixed_precision = bf16_mixed()
cfg.mixed_precision.grad_reduce_in_fp32 = False
cfg.comm_overlap = CommOverlapConfig(tp_comm_overlap=True, overlap_grad_reduce=True, overlap_param_gather=True)

# torchrun --nproc-per-node 8 --nnodes 128 THIS_FILE.py
if __name__ == "__main__":
    pretrain(cfg, forward_step)
