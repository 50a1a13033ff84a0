# WARNING: this layout does not fit: it needs 82.6 GiB per GPU, has 71.3 GiB; it will run out of memory as it stands
# pplan 0.1.0 (git e0e74dc): NeMo 2.0 recipe override for llama3.1-70b on 64 x h100-sxm (8 nodes of 8)
# layout tp=4,pp=4,dp=4,cp=1,ep=1,vp=5,mbs=1,gbs=64,sp=on,recompute=none,zero=1,schedule=interleaved
# predicted 7.478 s per step, 53.3 % MFU, 82.6 GiB per GPU
import nemo_run as run
from nemo.collections import llm
from nemo.collections.llm.recipes.precision.mixed_precision import bf16_mixed
from nemo.lightning.pytorch.callbacks.megatron_comm_overlap import MegatronCommOverlapCallback

recipe = llm.llama31_70b.pretrain_recipe(name="pplan", num_nodes=8, num_gpus_per_node=8)
recipe.trainer.strategy.tensor_model_parallel_size = 4
recipe.trainer.strategy.pipeline_model_parallel_size = 4
recipe.trainer.strategy.virtual_pipeline_model_parallel_size = 5
recipe.trainer.strategy.context_parallel_size = 1
recipe.trainer.strategy.expert_model_parallel_size = 1
recipe.trainer.strategy.sequence_parallel = True
recipe.data.micro_batch_size = 1
recipe.data.global_batch_size = 64
recipe.data.seq_length = 8192
recipe.model.config.seq_length = 8192
recipe.model.config.recompute_granularity = None
recipe.optim.config.use_distributed_optimizer = True
recipe.trainer.strategy.ddp.overlap_grad_reduce = True
recipe.trainer.strategy.ddp.overlap_param_gather = True
recipe.trainer.plugins = bf16_mixed()
recipe.trainer.callbacks.append(run.Config(MegatronCommOverlapCallback, tp_comm_overlap=True))
