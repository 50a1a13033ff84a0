# pplan 0.1.0 (git 3c813a6): Megatron-Bridge recipe override for nemotron4-15b on 16 x h100-sxm (2 nodes of 8)
# layout tp=4,pp=2,dp=2,cp=1,ep=1,vp=1,mbs=1,gbs=64,sp=on,recompute=full,zero=1,schedule=1f1b
# checked against Megatron-Bridge 0.3.1's source (the newest megatron-bridge on PyPI: the recipe function, the ConfigContainer's sections and their fields, CommOverlapConfig's, the mixed-precision names), by tests/conformance; Megatron-Bridge itself does not import without Transformer Engine, which does not install without a GPU
# predicted 4.002 s per step, 38.9 % MFU, 26.1 GiB per GPU
# note: Megatron-Bridge 0.3.1 has no pretraining recipe for nemotron4-15b: its model is GPTModelProvider's fields, on the recipes' common defaults (_pretrain_common)
# note: what the recipe sets and pplan does not price (CUDA graphs, token drop, forced load balancing) stays as the recipe has it
from megatron.core.activations import squared_relu
from megatron.bridge.models.gpt_provider import GPTModelProvider
from megatron.bridge.recipes.common import _pretrain_common
from megatron.bridge.training.comm_overlap import CommOverlapConfig
from megatron.bridge.training.gpt_step import forward_step
from megatron.bridge.training.mixed_precision import bf16_mixed
from megatron.bridge.training.pretrain import pretrain

cfg = _pretrain_common()
cfg.model = GPTModelProvider(
    num_layers=32,
    hidden_size=6144,
    ffn_hidden_size=24576,
    num_attention_heads=48,
    num_query_groups=8,
    normalization="LayerNorm",
    layernorm_epsilon=1e-05,
    gated_linear_unit=False,
    activation_func=squared_relu,
    position_embedding_type="rope",
    rotary_base=10000,
    rotary_percent=0.5,
    share_embeddings_and_output_weights=False,
    add_bias_linear=False,
    add_qkv_bias=False,
    qk_layernorm=False,
    hidden_dropout=0.0,
    attention_dropout=0.0,
)
cfg.tokenizer.tokenizer_type = "NullTokenizer"
cfg.tokenizer.tokenizer_model = None
cfg.tokenizer.vocab_size = 256000
cfg.model.tensor_model_parallel_size = 4
cfg.model.pipeline_model_parallel_size = 2
cfg.model.virtual_pipeline_model_parallel_size = None
cfg.model.context_parallel_size = 1
cfg.model.expert_model_parallel_size = 1
cfg.model.pipeline_model_parallel_layout = None
cfg.model.num_layers_in_first_pipeline_stage = None
cfg.model.num_layers_in_last_pipeline_stage = None
cfg.model.account_for_embedding_in_pipeline_split = False
cfg.model.account_for_loss_in_pipeline_split = False
cfg.model.sequence_parallel = True
cfg.train.micro_batch_size = 1
cfg.train.global_batch_size = 64
cfg.dataset.seq_length = 4096
cfg.model.seq_length = 4096
cfg.model.recompute_granularity = "full"
cfg.model.recompute_method = "uniform"
cfg.model.recompute_num_layers = 1
cfg.optimizer.use_distributed_optimizer = True
cfg.ddp.use_distributed_optimizer = True
cfg.ddp.overlap_grad_reduce = True
cfg.ddp.overlap_param_gather = True
cfg.mixed_precision = bf16_mixed()
cfg.mixed_precision.grad_reduce_in_fp32 = False
cfg.comm_overlap = CommOverlapConfig(tp_comm_overlap=True, overlap_grad_reduce=True, overlap_param_gather=True)

# torchrun --nproc-per-node 8 --nnodes 2 THIS_FILE.py
if __name__ == "__main__":
    pretrain(cfg, forward_step)
