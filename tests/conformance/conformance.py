"""Load pplan's emitted launch configs into the real frameworks.

usage: conformance.py DIR

DIR holds, for each case N, N.case ("MODEL GPUS LAYOUT", what run.sh asked
pplan for), N.torchtitan.sh, N.megatron.sh, N.nemo.sh, N.bridge.py, N.deepspeed.json
and N.json
(pplan predict --json).  Each config is handed to the framework's own
parser and validation, pinned in requirements.txt:

  torchtitan 0.3   ConfigManager().parse_args on the launch line's
                   arguments, ParallelDims on its degrees, the stage split
                   of pipeline_parallel.py, and the model its --module/
                   --config builds (on the meta device) against pplan's
                   shape and parameter count (within 0.5 %)
  Megatron-Core    the Megatron-LM flags as TransformerConfig (or
                   MLATransformerConfig) fields, through __post_init__'s
                   checks; a flag that is neither a config field nor a
                   Megatron-LM training argument listed below is an error
  DeepSpeed        DeepSpeedConfig(json, mpu) with the layout's data
                   parallel size: batch arithmetic and the pydantic
                   models of every section
  NeMo 2           the recipe override against NeMo's pinned source
                   (nemo_toolkit, unpacked, not importable without
                   Transformer Engine): every name it uses defined there
                   or in Megatron-Core's config dataclasses, the degrees
                   and batch as asked
  Megatron-Bridge  the recipe override against Megatron-Bridge's pinned
                   source (megatron_bridge, unpacked, not importable
                   without Transformer Engine): the recipe function and
                   the imports defined there, every cfg.SECTION.FIELD a
                   field of that section's dataclass (Bridge's, or the
                   Megatron-Core one it extends), the mixed-precision
                   name a registered recipe, CommOverlapConfig's keywords
                   its fields, the degrees and batch as asked; a model
                   without a recipe is GPTModelProvider's fields, each a
                   field of it, built as Megatron-Core's TransformerConfig
                   (its __post_init__ checks) with the layout's degrees,
                   its shape and vocabulary against pplan's
  LoRA (--peft)    NeMo's finetune_recipe (peft_scheme 'lora', packed
                   sequences) or Bridge's NAME_peft_config / _peft_common
                   with LoRA(), the LoRA config's fields, the rank asked,
                   one pack of mbs x seq tokens a microbatch, the batch in
                   packs, run by finetune()

The expected degrees come from the layout run.sh asked for, not from the
emitted text.  The last line says how many configs loaded; the exit
status is 1 when any did not.
"""
import ast
import contextlib
import dataclasses
import importlib
import io
import json
import logging
import os
import re
import shlex
import sys

logging.disable(logging.WARNING)
os.environ.setdefault("TORCHTITAN_LOG_LEVEL", "ERROR")

failures = []
loaded = 0
total = 0


def check(ok, what):
    if not ok:
        raise AssertionError(what)


def layout_of(text):
    """'tp=8,pp=4,...' -> dict of ints (and strings), defaults as pplan's."""
    d = {"tp": 1, "pp": 1, "dp": 1, "cp": 1, "ep": 1, "vp": 1, "mbs": 1}
    for kv in text.split(","):
        k, v = kv.split("=")
        d[k] = int(v) if v.isdigit() else v
    return d


def emitted_layout(path):
    """The layout line of an emitted file's header: the layout pplan completed."""
    for line in open(path):
        if line.startswith("# layout "):
            return layout_of(line[len("# layout "):].strip())
    raise AssertionError(f"{path}: no '# layout' line")


# ---- torchtitan ---------------------------------------------------------------

def titan_argv(path):
    lines = [l.rstrip("\n") for l in open(path) if not l.startswith("#")]
    words = shlex.split(" ".join(l[:-1] if l.endswith("\\") else l for l in lines))
    check(words[:1] == ["torchrun"], "the line does not start with torchrun")
    m = words.index("-m")
    check(words[m + 1] == "torchtitan.train", "not -m torchtitan.train")
    run = words[1:m]
    nodes = int(run[run.index("--nnodes") + 1])
    nproc = int(run[run.index("--nproc-per-node") + 1])
    return nodes * nproc, words[m + 2:]


def check_torchtitan(path, gpus, asked, pred):
    from torchtitan.config.manager import ConfigManager
    from torchtitan.distributed.parallel_dims import ParallelDims
    from torchtitan.distributed import pipeline_parallel as ppmod
    import torch

    world, argv = titan_argv(path)
    if "CUSTOM" in argv:
        return "skipped (no torchtitan config for this model)"
    check(world == gpus, f"torchrun starts {world} processes for {gpus} GPUs")
    with contextlib.redirect_stdout(io.StringIO()):
        cfg = ConfigManager().parse_args(argv)
    p = cfg.parallelism
    lay = emitted_layout(path)
    dp = p.data_parallel_replicate_degree * p.data_parallel_shard_degree
    got = (dp, p.tensor_parallel_degree, p.pipeline_parallel_degree,
           p.context_parallel_degree, p.expert_parallel_degree)
    want = (asked["dp"], asked["tp"], asked["pp"], asked["cp"], asked["ep"])
    check(got == want, f"degrees dp,tp,pp,cp,ep {got}, asked {want}")
    dims = ParallelDims.from_config(p, world)
    check(dims.world_size == gpus, "ParallelDims world size")
    check(cfg.training.global_batch_size == asked["gbs"], "global batch")
    model = cfg.model_spec.model
    nl = len(model.layers)
    check(nl == pred["num_layers"], f"torchtitan's model has {nl} layers, pplan {pred['num_layers']}")
    check(model.dim == pred["hidden_size"], f"dim {model.dim}, pplan {pred['hidden_size']}")
    check(model.vocab_size == pred["vocab_size"],
          f"vocab {model.vocab_size}, pplan {pred['vocab_size']}")
    if p.pipeline_parallel_degree > 1:
        stages, _, _, _ = ppmod._get_pipeline_metadata(dims, p, model)
        vp = lay["vp"]
        check(stages == p.pipeline_parallel_degree * vp,
              f"{stages} virtual stages, layout has pp x vp = {p.pipeline_parallel_degree * vp}")
    with torch.device("meta"):
        net = model.build()
    n = sum(t.numel() for t in net.parameters())
    err = abs(n - pred["params"]) / n
    check(err < 0.005, f"torchtitan builds {n / 1e9:.3f} B parameters, pplan says "
                       f"{pred['params'] / 1e9:.3f} B ({100 * err:.2f} %)")
    return f"loaded: {cfg.model_spec.name if hasattr(cfg.model_spec, 'name') else ''} " \
           f"{n / 1e9:.2f} B parameters (pplan {pred['params'] / 1e9:.2f} B)"


# ---- Megatron ------------------------------------------------------------------

# Megatron-LM's training arguments (megatron/training/arguments.py) that are
# not TransformerConfig fields: run-level settings and the ones
# core_transformer_config_from_args translates under another name.
MEGATRON_TRAINING = {
    "micro_batch_size", "global_batch_size", "seq_length", "max_position_embeddings",
    "position_embedding_type", "rotary_base", "rotary_percent", "rope_type",
    "untie_embeddings_and_output_weights", "use_distributed_optimizer",
    "overlap_grad_reduce", "overlap_param_gather", "use_megatron_fsdp", "use_custom_fsdp",
    "data_parallel_sharding_strategy", "ckpt_format", "group_query_attention",
    "num_layers_per_virtual_pipeline_stage", "num_virtual_stages_per_pipeline_rank",
    "swiglu", "disable_bias_linear", "norm_epsilon", "num_experts",
    "no_gradient_accumulation_fusion", "tp_comm_overlap", "bf16", "fp16",
    "use_flash_attn", "attention_backend", "transformer_impl", "fp8_format",
    "decoder_first_pipeline_num_layers", "decoder_last_pipeline_num_layers",
    "account_for_embedding_in_pipeline_split", "account_for_loss_in_pipeline_split",
    "pipeline_model_parallel_layout", "make_vocab_size_divisible_by", "padded_vocab_size",
    "vocab_size", "apply_layernorm_1p", "no_masked_softmax_fusion", "no_bias_swiglu_fusion",
    "no_rope_fusion", "use_rotary_position_embeddings", "recompute_activations",
    "distribute_saved_activations", "sequence_parallel", "window_size",
    "no_persist_layer_norm", "fp8", "fp8_recipe", "fp4_format", "moe_layer_freq",
    "first_last_layers_bf16", "num_layers_at_start_in_bf16", "num_layers_at_end_in_bf16",
    "fine_grained_activation_offloading", "offload_modules", "num_query_groups",
    "context_parallel_size", "expert_tensor_parallel_size", "moe_router_load_balancing_type",
    "moe_aux_loss_coeff", "moe_router_dtype", "moe_permute_fusion", "overlap_moe_expert_parallel_comm",
    "delay_wgrad_compute", "use_tp_pp_dp_mapping", "ddp_average_in_collective",
    "accumulate_allreduce_grads_in_fp32", "grad_reduce_in_bf16", "tokenizer_type",
    "rotary_scaling_factor", "mtp_num_layers", "moe_router_topk_scaling_factor",
    "moe_router_score_function", "moe_router_enable_expert_bias", "moe_router_num_groups",
    "moe_router_group_topk", "moe_shared_expert_overlap", "cp_comm_type",
    "pipeline_model_parallel_size", "tensor_model_parallel_size", "expert_model_parallel_size",
    "recompute_granularity", "recompute_method", "recompute_num_layers", "recompute_modules",
    "squared_relu", "hybrid_override_pattern",
}


def megatron_args(path):
    text = open(path).read()
    m = re.search(r"^MEGATRON_ARGS=\((.*?)^\)", text, re.S | re.M)
    check(m, "no MEGATRON_ARGS=( ... ) array")
    body = "\n".join(l for l in m.group(1).splitlines() if not l.strip().startswith("#"))
    words = shlex.split(body)
    args = {}
    i = 0
    while i < len(words):
        w = words[i]
        check(w.startswith("--"), f"{w!r} is not a flag")
        name = w[2:].replace("-", "_")
        check(name not in args, f"--{w[2:]} given twice")
        j = i + 1
        while j < len(words) and not words[j].startswith("--"):
            j += 1
        # a flag's words up to the next flag: one value, or a list (nargs '+')
        args[name] = True if j == i + 1 else words[i + 1] if j == i + 2 else words[i + 1:j]
        i = j
    return args


def number(v):
    if v is True:
        return True
    if isinstance(v, list):
        return [number(x) for x in v]
    try:
        return int(v)
    except ValueError:
        try:
            return float(v)
        except ValueError:
            return v


def _bf16_layers(asked):
    """The end layers asked in bf16 (--bf16-layers=F,L or N), (0, 0) if none."""
    for sw in asked.get("switches", []):
        if sw.startswith("--bf16-layers="):
            v = [int(x) for x in sw.split("=", 1)[1].split(",")]
            return (v[0], v[-1])
    return (0, 0)


def _recipe_bf16_layers(v, mp):
    """The end layers a NeMo or Bridge config keeps in bf16 (the configs pplan
    writes say them whole, or first_last_layers_bf16 = False)."""
    if not v.get(f"{mp}.first_last_layers_bf16"):
        return (0, 0)
    return (v.get(f"{mp}.num_layers_at_start_in_bf16"), v.get(f"{mp}.num_layers_at_end_in_bf16"))


def check_megatron(path, gpus, asked, pred):
    import torch
    import torch.nn.functional as F
    from megatron.core.transformer.transformer_config import (
        MLATransformerConfig, TransformerConfig)

    from megatron.core.optimizer import OptimizerConfig

    args = {k: number(v) for k, v in megatron_args(path).items()}
    cls = MLATransformerConfig if args.get("multi_latent_attention") else TransformerConfig
    fields = {f.name for f in dataclasses.fields(cls)}
    opt_fields = {f.name for f in dataclasses.fields(OptimizerConfig)}
    unknown = [k for k in args
               if k not in fields and k not in opt_fields and k not in MEGATRON_TRAINING]
    check(not unknown, "flags Megatron-LM does not have: " + ", ".join("--" + k.replace("_", "-") for k in unknown))
    kw = {k: v for k, v in args.items() if k in fields}
    # core_transformer_config_from_args's renames
    kw["layernorm_epsilon"] = args.get("norm_epsilon", 1e-5)
    if "num_experts" in args:
        kw["num_moe_experts"] = args["num_experts"]
    if "fp4_format" in args:  # --fp4-format is TransformerConfig's fp4
        kw["fp4"] = args["fp4_format"]
    if args.get("swiglu"):
        kw["gated_linear_unit"] = True
        kw["activation_func"] = F.silu
    kw["add_bias_linear"] = not args.get("disable_bias_linear", False)
    kw["gradient_accumulation_fusion"] = not args.get("no_gradient_accumulation_fusion", False)
    if args.get("group_query_attention"):
        kw["num_query_groups"] = args["num_query_groups"]
    for k in ("tensor_model_parallel_size", "pipeline_model_parallel_size",
              "expert_model_parallel_size", "context_parallel_size",
              "expert_tensor_parallel_size", "sequence_parallel",
              "recompute_granularity", "recompute_method", "recompute_num_layers",
              "bf16", "fp16", "rotary_scaling_factor", "rope_type"):
        if k in args and k in fields:
            kw[k] = args[k]
    if "moe_layer_freq" in args:
        kw["moe_layer_freq"] = eval(args["moe_layer_freq"], {"__builtins__": {}})
    if "num_layers_per_virtual_pipeline_stage" in args:
        per_rank = args["num_layers"] // args["pipeline_model_parallel_size"]
        kw["virtual_pipeline_model_parallel_size"] = per_rank // args["num_layers_per_virtual_pipeline_stage"]
    if "window_size" in args:  # core_transformer_config_from_args makes it a tuple
        kw["window_size"] = tuple(int(x) for x in str(args["window_size"]).strip("()").split(","))
    if kw.get("bf16"):
        kw["params_dtype"] = torch.bfloat16
        kw["pipeline_dtype"] = torch.bfloat16
    cfg = cls(**kw)
    got = (cfg.tensor_model_parallel_size, cfg.pipeline_model_parallel_size,
           cfg.expert_model_parallel_size, cfg.context_parallel_size)
    want = (asked["tp"], asked["pp"], asked["ep"], asked["cp"])
    check(got == want, f"degrees tp,pp,ep,cp {got}, asked {want}")
    check(cfg.num_layers == pred["num_layers"] and cfg.hidden_size == pred["hidden_size"],
          "layers or hidden size differ from pplan's model")
    if "window_size" in kw or pred.get("window_layers"):
        from megatron.core.transformer.utils import is_layer_window_attention
        n = sum(bool(is_layer_window_attention(cfg.window_size, cfg.window_attn_skip_freq, i + 1))
                for i in range(cfg.num_layers))
        w = cfg.window_size[0] + 1 if cfg.window_size else 0
        check((n, w if n else 0) == (pred.get("window_layers", 0), pred.get("sliding_window", 0)),
              f"{n} layers windowed to {w} tokens, pplan {pred.get('window_layers', 0)} "
              f"to {pred.get('sliding_window', 0)}")
    if "recompute_layers" in asked:
        check(cfg.recompute_granularity == "full" and cfg.recompute_method == "block"
              and cfg.recompute_num_layers == asked["recompute_layers"],
              f"recompute {cfg.recompute_granularity}/{cfg.recompute_method}/"
              f"{cfg.recompute_num_layers}, asked block of {asked['recompute_layers']}")
    if "--moe-a2a-overlap=on" in asked.get("switches", []):
        check(cfg.overlap_moe_expert_parallel_comm and cfg.delay_wgrad_compute,
              "the 1F1B A2A overlap asked is not in the config")
    for d in ("allgather", "flex"):
        if f"--moe-dispatcher={d}" in asked.get("switches", []):
            check(cfg.moe_token_dispatcher_type == d,
                  f"dispatcher {cfg.moe_token_dispatcher_type}, asked {d}")
    if "--moe-shared-expert-overlap=on" in asked.get("switches", []):
        check(cfg.moe_shared_expert_overlap, "the shared-expert overlap asked is not in the config")
    want16 = _bf16_layers(asked)
    got16 = (cfg.num_layers_at_start_in_bf16, cfg.num_layers_at_end_in_bf16) \
        if cfg.first_last_layers_bf16 else (0, 0)
    check(got16 == want16, f"bf16 end layers {got16}, asked {want16}")
    if "--precision=nvfp4" in asked.get("switches", []):
        check(cfg.fp4 == "e2m1" and cfg.fp4_recipe == "nvfp4" and "fp8_format" not in args,
              f"fp4 {cfg.fp4}/{cfg.fp4_recipe} with fp8 {args.get('fp8_format')}, asked NVFP4")
    else:
        check(cfg.fp4 is None, "an fp4 mode pplan was not asked for")
    if "offload_layers" in asked:
        check(cfg.cpu_offloading and cfg.cpu_offloading_num_layers == asked["offload_layers"],
              f"cpu offloading {cfg.cpu_offloading}/{cfg.cpu_offloading_num_layers}, "
              f"asked {asked['offload_layers']} layers")
    if args.get("use_precision_aware_optimizer"):
        # OptimizerConfig's own checks (adam, the distributed optimizer)
        # run before it asks Transformer Engine's version and looks for its
        # FusedAdam: TE does not install without a GPU, so getting that
        # far is the check.
        dt = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
        try:
            oc = OptimizerConfig(
                use_precision_aware_optimizer=True,
                use_distributed_optimizer=bool(args.get("use_distributed_optimizer")),
                bf16=bool(args.get("bf16")),
                exp_avg_dtype=dt[args["exp_avg_dtype"]],
                exp_avg_sq_dtype=dt[args["exp_avg_sq_dtype"]])
            check(oc.exp_avg_dtype == torch.bfloat16, "moments not bf16")
        except (RuntimeError, TypeError) as err:
            check("TransformerEngine" in str(err) or "Version" in str(err),
                  f"OptimizerConfig: {err}")
        check("switches" in asked and "--precision-aware-optimizer=on" in asked["switches"],
              "a precision-aware optimizer pplan was not asked for")
    check(asked["gbs"] % (args["micro_batch_size"] * asked["dp"]) == 0,
          "global batch not a multiple of micro batch x dp")
    return f"loaded as {cls.__name__}"


# ---- DeepSpeed -----------------------------------------------------------------

class Mpu:
    def __init__(self, dp):
        self.dp = dp

    def get_data_parallel_world_size(self):
        return self.dp


def check_deepspeed(path, gpus, asked, pred):
    from deepspeed.runtime import config as dsconfig

    # no process group here: DeepSpeedConfig asks for a rank before the mpu
    dsconfig.dist.get_rank = lambda *a, **k: 0
    DeepSpeedConfig = dsconfig.DeepSpeedConfig
    doc = json.load(open(path))
    cfg = DeepSpeedConfig(doc, mpu=Mpu(asked["dp"]))
    check(cfg.train_batch_size == asked["gbs"], f"train_batch_size {cfg.train_batch_size}")
    check(cfg.train_micro_batch_size_per_gpu * cfg.gradient_accumulation_steps * asked["dp"]
          == asked["gbs"], "micro x accumulation x dp is not the global batch")
    return f"loaded: ZeRO stage {cfg.zero_optimization_stage}"


# ---- NeMo 2 (against its pinned source) --------------------------------------------
# NeMo and Megatron-Bridge do not import without Transformer Engine, which
# does not install without a GPU; their pinned source (the wheel, not
# installed: cmake/install-deps.sh unpacks it) defines what an override may
# name, and ast reads it: the recipe module and its pretrain_recipe's
# parameters, MegatronStrategy's, MockDataModule's and the callback's
# parameters, the imports' names; model, optimizer and DDP fields are
# Megatron-Core's dataclasses (installed) or NeMo's model configs.

def _source_pin(name):
    """NAME-VERSION of sources.txt's pin for name."""
    here = os.path.dirname(os.path.abspath(__file__))
    for line in open(os.path.join(here, "sources.txt")):
        if line.startswith(name + "=="):
            return line.strip().replace("==", "-")
    raise AssertionError(f"sources.txt pins no {name}")


NEMO_RELEASE = _source_pin("nemo_toolkit")  # NeMo 25.11
NEMO_SRC = os.path.join(sys.prefix, "src", NEMO_RELEASE)


def _dotted(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        left = _dotted(node.value)
        return f"{left}.{node.attr}" if left else None
    return None


BRIDGE_RELEASE = _source_pin("megatron_bridge")
BRIDGE_SRC = os.path.join(sys.prefix, "src", BRIDGE_RELEASE)


def _nemo_file(module, src=None):
    base = os.path.join(src or NEMO_SRC, *module.split("."))
    for p in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.exists(p):
            return p
    return None


def _nemo_tree(module):
    path = _nemo_file(module)
    check(path, f"NeMo {NEMO_RELEASE} has no module {module}")
    return ast.parse(open(path).read())


def _bridge_tree(module):
    path = _nemo_file(module, BRIDGE_SRC)
    check(path, f"Megatron-Bridge {BRIDGE_RELEASE} has no module {module}")
    return ast.parse(open(path).read())


def _class_fields(tree, cls):
    """Annotated fields and properties of class cls in tree (not its bases)."""
    c = next((st for st in tree.body if isinstance(st, ast.ClassDef) and st.name == cls), None)
    check(c, f"no class {cls}")
    names = {b.target.id for b in c.body
             if isinstance(b, ast.AnnAssign) and isinstance(b.target, ast.Name)}
    names |= {b.name for b in c.body if isinstance(b, ast.FunctionDef)
              and any(_dotted(d) == "property" for d in b.decorator_list)}
    return names


def _bridge_provider_fields():
    """Annotated fields of Bridge's model providers (megatron/bridge/models)."""
    fields = set()
    root = os.path.join(BRIDGE_SRC, "megatron", "bridge", "models")
    for d, _, files in os.walk(root):
        for name in files:
            if name.endswith(".py"):
                for st in ast.walk(ast.parse(open(os.path.join(d, name)).read())):
                    if isinstance(st, ast.ClassDef):
                        fields |= {b.target.id for b in st.body if isinstance(b, ast.AnnAssign)
                                   and isinstance(b.target, ast.Name)}
    return fields


def _defines(tree, name):
    for st in tree.body:
        if isinstance(st, (ast.FunctionDef, ast.ClassDef)) and st.name == name:
            return True
        if isinstance(st, (ast.Import, ast.ImportFrom)) and any(
                (a.asname or a.name.split(".")[0]) == name for a in st.names):
            return True
        if isinstance(st, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in st.targets):
            return True
    return False


def _params(tree, cls, fn):
    """fn's parameter names (of class cls, or top-level where cls is None)."""
    body = tree.body
    if cls:
        c = next((st for st in body if isinstance(st, ast.ClassDef) and st.name == cls), None)
        check(c, f"no class {cls}")
        body = c.body
    f = next((st for st in body if isinstance(st, ast.FunctionDef) and st.name == fn), None)
    check(f, f"no {cls + '.' if cls else ''}{fn}")
    a = f.args
    return {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}


def _nemo_model_fields():
    """Annotated fields of NeMo's model config dataclasses (gpt/model/*.py)."""
    fields = set()
    d = os.path.join(NEMO_SRC, "nemo", "collections", "llm", "gpt", "model")
    for name in os.listdir(d):
        if name.endswith(".py"):
            for st in ast.walk(ast.parse(open(os.path.join(d, name)).read())):
                if isinstance(st, ast.ClassDef):
                    fields |= {b.target.id for b in st.body
                               if isinstance(b, ast.AnnAssign) and isinstance(b.target, ast.Name)}
    return fields


def _switch(asked, name):
    """The value run.sh gave switch name (--name V or --name=V), or None."""
    sw = " ".join(asked["switches"]).replace("=", " ").split()
    return sw[sw.index(name) + 1] if name in sw else None


def _lora_rank(asked):
    """The LoRA rank run.sh asked for (--peft lora[:R], 32 by default), 0 for none."""
    v = _switch(asked, "--peft")
    if v is None or v == "none":
        return 0
    return int(v.split(":")[1]) if ":" in v else 32


_MCORE_LINEARS = []


def _mcore_linears():
    """The names Megatron-Core's layers give the linears they build
    (self.NAME = build_module(...) or a submodule), which LoRA's
    target_modules match."""
    if not _MCORE_LINEARS:
        import megatron.core
        pat = re.compile(r"self\.(\w+) = (?:build_module\(|submodules\.)")
        for dp, _, fs in os.walk(os.path.dirname(megatron.core.__file__)):
            for f in fs:
                if f.endswith(".py"):
                    _MCORE_LINEARS.extend(pat.findall(open(os.path.join(dp, f)).read()))
    return set(_MCORE_LINEARS)


def _check_lora(v, c, data, asked):
    """A LoRA recipe's rank, linears and packs: the rank asked, the
    target_modules asked (LoRA's default four where none were), each a
    module Megatron-Core builds, one pack a microbatch of mbs x seq
    tokens, the batch in packs (pplan prices mbs sequences of seq)."""
    rank = _lora_rank(asked)
    check(v.get(c + ".peft.dim") == rank, f"LoRA dim {v.get(c + '.peft.dim')}, asked {rank}")
    tm = v.get(c + ".peft.target_modules")
    want = (_switch(asked, "--lora-targets") or "linear_qkv,linear_proj,linear_fc1,linear_fc2")
    check(isinstance(tm, list) and tm == want.split(","),
          f"peft.target_modules {tm}, asked {want}")
    check(not set(tm) - _mcore_linears(),
          f"target_modules {set(tm) - _mcore_linears()}: no Megatron-Core module of that name")
    seq = int(_switch(asked, "--seq"))  # run.sh gives LoRA cases their --seq
    pack = v.get(f"{c}.{data}.packed_sequence_specs.packed_sequence_size")
    check(pack == asked["mbs"] * seq, f"packs of {pack} tokens, asked {asked['mbs']} x {seq}")
    check(v.get(f"{c}.{data}.seq_length") == pack, "the data's seq_length is not the pack's")
    return dict(asked, mbs=1, gbs=asked["gbs"] // asked["mbs"])


def _import_core(st, imported):
    """A 'from megatron.core.X import Y' of an override, against the
    installed Megatron-Core itself; each name into imported."""
    mod = importlib.import_module(st.module)
    for a in st.names:
        check(hasattr(mod, a.name), f"{st.module} defines no {a.name}")
        imported[a.asname or a.name] = (st.module, a.name)


def _check_degrees(v, degrees, batch, asked):
    """A recipe override's degrees (under `degrees`) and batch (under
    `batch`), of the literal overrides v, against the layout asked."""
    got = (v.get(degrees + "tensor_model_parallel_size"),
           v.get(degrees + "pipeline_model_parallel_size"),
           v.get(degrees + "context_parallel_size"), v.get(degrees + "expert_model_parallel_size"),
           v.get(degrees + "virtual_pipeline_model_parallel_size") or 1,
           v.get(batch + "global_batch_size"), v.get(batch + "micro_batch_size"))
    want = (asked["tp"], asked["pp"], asked["cp"], asked["ep"], asked["vp"], asked["gbs"],
            asked["mbs"])
    check(got == want, f"tp,pp,cp,ep,vp,gbs,mbs {got}, asked {want}")


def check_nemo(path, gpus, asked, pred):
    from megatron.core.distributed import DistributedDataParallelConfig
    from megatron.core.optimizer import OptimizerConfig
    from megatron.core.transformer.transformer_config import (
        MLATransformerConfig, TransformerConfig)

    check(os.path.isdir(NEMO_SRC),
          f"{NEMO_SRC} is missing: cmake/install-deps.sh --frameworks unpacks NeMo's source there")
    # the override, without the notes pplan printed on stderr beside it
    text = "".join(l for l in open(path) if not l.startswith("pplan: "))
    if "llm.REPLACE_WITH_RECIPE" in text:
        return "skipped (NeMo has no recipe for this model: the file's note says so)"
    fields = {
        "recipe.model.config.": {f.name for f in dataclasses.fields(MLATransformerConfig)}
        | {f.name for f in dataclasses.fields(TransformerConfig)} | _nemo_model_fields(),
        "recipe.optim.config.": {f.name for f in dataclasses.fields(OptimizerConfig)},
        "recipe.trainer.strategy.ddp.": {f.name for f in dataclasses.fields(DistributedDataParallelConfig)},
        "recipe.trainer.strategy.": _params(
            _nemo_tree("nemo.lightning.pytorch.strategies.megatron_strategy"),
            "MegatronStrategy", "__init__"),
        "recipe.data.packed_sequence_specs.": _class_fields(
            _nemo_tree("nemo.collections.llm.gpt.data.packed_sequence"), "PackedSequenceSpecs"),
        "recipe.data.": _params(_nemo_tree("nemo.collections.llm.gpt.data.mock"),
                                "MockDataModule", "__init__")
        | _params(_nemo_tree("nemo.collections.llm.gpt.data.fine_tuning"),
                  "FineTuningDataModule", "__init__"),
        "recipe.peft.": _class_fields(_nemo_tree("nemo.collections.llm.peft.lora"), "LoRA"),
        "recipe.trainer.plugins.": _params(
            _nemo_tree("nemo.lightning.pytorch.plugins.mixed_precision"),
            "MegatronMixedPrecision", "__init__"),
    }
    imported, v, recipe = {}, {}, None
    lora = _lora_rank(asked) > 0
    kind = "finetune_recipe" if lora else "pretrain_recipe"
    for st in ast.parse(text).body:
        if isinstance(st, ast.ImportFrom) and st.module.startswith("megatron.core."):
            _import_core(st, imported)
        elif isinstance(st, ast.ImportFrom):
            tree = _nemo_tree(st.module)
            for a in st.names:
                check(_defines(tree, a.name) or _nemo_file(f"{st.module}.{a.name}"),
                      f"{st.module} defines no {a.name}")
                imported[a.asname or a.name] = (st.module, a.name)
        elif isinstance(st, ast.Import):
            check(all(a.name in ("torch", "nemo_run") for a in st.names),
                  "an import other than torch and nemo_run")
        elif isinstance(st, ast.Assign):
            target = _dotted(st.targets[0])
            if target == "recipe":
                fn = _dotted(st.value.func)
                m = re.fullmatch(r"llm\.(\w+)\." + kind, fn or "")
                check(m, f"recipe = {fn}(...) is not llm.NAME.{kind}")
                recipe = m.group(1)
                params = _params(_nemo_tree(f"nemo.collections.llm.recipes.{recipe}"), None, kind)
                kw = {k.arg: ast.literal_eval(k.value) for k in st.value.keywords}
                check(set(kw) <= params, f"llm.{recipe}.{kind} has no {set(kw) - params}")
                check(not lora or (kw.get("peft_scheme"), kw.get("packed_sequence")) == ("lora", True),
                      "a LoRA job's finetune_recipe without peft_scheme='lora' and packed sequences")
                check(kw["num_nodes"] * kw["num_gpus_per_node"] == gpus,
                      f"{kw['num_nodes']} x {kw['num_gpus_per_node']} GPUs, asked {gpus}")
                continue
            if target == "recipe.trainer.plugins":
                name = _dotted(st.value.func)
                check(name in imported, f"the plugin {name} is not imported")
                continue
            if target == "recipe.trainer.strategy.ddp":  # run.Config(DistributedDataParallelConfig, ...)
                check(_dotted(st.value.func) == "run.Config"
                      and imported.get(_dotted(st.value.args[0])) == (
                          "megatron.core.distributed", "DistributedDataParallelConfig"),
                      "the strategy's ddp is not a run.Config of DistributedDataParallelConfig")
                from megatron.core.distributed import DistributedDataParallelConfig as DDP
                extra = {k.arg for k in st.value.keywords} - {f.name for f in dataclasses.fields(DDP)}
                check(not extra, f"DistributedDataParallelConfig has no {extra}")
                continue
            prefix = next((p for p in fields if target.startswith(p)), None)
            check(prefix, f"{target}: pplan knows no NeMo definition for it")
            key = target[len(prefix):]
            check(key in fields[prefix], f"{target}: NeMo {NEMO_RELEASE} has no {key} there")
            with contextlib.suppress(ValueError):
                v[target] = ast.literal_eval(st.value)
        elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
            check(_dotted(st.value.func) == "recipe.trainer.callbacks.append",
                  "a statement other than recipe.trainer.callbacks.append(...)")
            cfg = st.value.args[0]
            cls = _dotted(cfg.args[0])
            check(cls in imported, f"the callback {cls} is not imported")
            params = _params(_nemo_tree(imported[cls][0]), imported[cls][1], "__init__")
            extra = {k.arg for k in cfg.keywords} - params
            check(not extra, f"{cls} has no {extra}")
    check(recipe, f"no recipe = llm.NAME.{kind}(...) line")
    check(_recipe_bf16_layers(v, "recipe.trainer.plugins") == _bf16_layers(asked),
          f"bf16 end layers {_recipe_bf16_layers(v, 'recipe.trainer.plugins')}, asked {_bf16_layers(asked)}")
    nvfp4 = (v.get("recipe.trainer.plugins.fp4"), v.get("recipe.trainer.plugins.fp4_recipe"))
    check((nvfp4 == ("e2m1", "nvfp4")) == ("--precision=nvfp4" in asked.get("switches", [])),
          f"the plugin's fp4 {nvfp4}, asked {asked.get('switches')}")
    s = "recipe.trainer.strategy."
    if lora:
        asked = _check_lora(v, "recipe", "data", asked)
    _check_degrees(v, s, "recipe.data.", asked)
    return f"matches {NEMO_RELEASE}'s source: llm.{recipe}, {len(v)} overrides"


def _recipe_function(family, name):
    """The def of NAME in megatron/bridge/recipes/FAMILY/*.py."""
    d = os.path.join(BRIDGE_SRC, "megatron", "bridge", "recipes", family)
    for f in sorted(os.listdir(d)):
        if f.endswith(".py"):
            for st in ast.parse(open(os.path.join(d, f)).read()).body:
                if isinstance(st, ast.FunctionDef) and st.name == name:
                    return st
    raise AssertionError(f"megatron.bridge.recipes.{family} defines no {name}")


def check_bridge(path, gpus, asked, pred):
    from megatron.core.datasets.gpt_dataset import GPTDatasetConfig
    from megatron.core.distributed import DistributedDataParallelConfig
    from megatron.core.optimizer import OptimizerConfig
    from megatron.core.transformer.transformer_config import (
        MLATransformerConfig, TransformerConfig)

    check(os.path.isdir(BRIDGE_SRC),
          f"{BRIDGE_SRC} is missing: cmake/install-deps.sh --frameworks unpacks Megatron-Bridge's source there")
    text = open(path).read()
    if "REPLACE_WITH_RECIPE" in text:
        return "skipped (Megatron-Bridge has no recipe for this model: the file's note says so)"
    config = _bridge_tree("megatron.bridge.training.config")
    dc = dataclasses.fields
    fields = {
        "model": {f.name for f in dc(MLATransformerConfig)} | {f.name for f in dc(TransformerConfig)}
        | _bridge_provider_fields(),
        "optimizer": {f.name for f in dc(OptimizerConfig)} | _class_fields(config, "OptimizerConfig"),
        "ddp": {f.name for f in dc(DistributedDataParallelConfig)}
        | _class_fields(config, "DistributedDataParallelConfig"),
        "train": _class_fields(config, "TrainingConfig"),
        "dataset": {f.name for f in dc(GPTDatasetConfig)} | _class_fields(config, "GPTDatasetConfig")
        | _class_fields(config, "DataloaderConfig") | _class_fields(config, "FinetuningDatasetConfig"),
        "dataset.packed_sequence_specs": _class_fields(
            _bridge_tree("megatron.bridge.data.datasets.packed_sequence"), "PackedSequenceSpecs"),
        "peft": _class_fields(_bridge_tree("megatron.bridge.peft.lora"), "LoRA"),
        "dist": _class_fields(config, "DistributedInitConfig"),
        "mixed_precision": _class_fields(_bridge_tree("megatron.bridge.training.mixed_precision"),
                                         "MixedPrecisionConfig"),
        "tokenizer": _class_fields(_bridge_tree("megatron.bridge.training.tokenizers.config"),
                                   "TokenizerConfig"),
    }
    provider_fields = ({f.name for f in dc(TransformerConfig)}
                       | _class_fields(_bridge_tree("megatron.bridge.models.gpt_provider"),
                                       "GPTModelProvider"))
    provider = None
    sections = _class_fields(config, "ConfigContainer")
    imported, v, recipe = {}, {}, None
    lora = _lora_rank(asked) > 0
    kind = "peft" if lora else "pretrain"
    for st in ast.parse(text).body:
        if isinstance(st, ast.ImportFrom) and st.module.startswith("megatron.core."):
            _import_core(st, imported)
        elif isinstance(st, ast.ImportFrom):
            tree = _bridge_tree(st.module)
            for a in st.names:
                check(_defines(tree, a.name), f"{st.module} defines no {a.name}")
                imported[a.asname or a.name] = (st.module, a.name)
        elif isinstance(st, ast.Import):
            check(all(a.name in ("torch", "torch.nn.functional") for a in st.names),
                  "an import other than torch and torch.nn.functional")
            imported.update({a.asname or a.name: (a.name, None) for a in st.names})
        elif isinstance(st, ast.Assign):
            target = _dotted(st.targets[0])
            if target == "cfg":
                fn = _dotted(st.value.func)
                check(fn in imported and (fn.endswith(f"_{kind}_config") or fn == f"_{kind}_common"),
                      f"cfg = {fn}() is not an imported NAME_{kind}_config")
                module, name = imported[fn]
                check(module.startswith("megatron.bridge.recipes."), f"{fn} is not a recipe")
                if name == f"_{kind}_common":  # the recipes' shared defaults
                    a = next(f for f in _bridge_tree(module).body
                             if isinstance(f, ast.FunctionDef) and f.name == name).args
                else:
                    a = _recipe_function(module.rsplit(".", 1)[1], name).args
                check(len(a.args) == len(a.defaults) and not st.value.args,
                      f"{fn}() needs arguments")
                kw = {k.arg: ast.literal_eval(k.value) for k in st.value.keywords}
                check(set(kw) <= {x.arg for x in a.args}, f"{fn} has no {set(kw)}")
                check(not lora or name.startswith("_") or kw.get("peft_scheme") == "lora",
                      f"{fn}() without peft_scheme='lora'")
                recipe = fn
                continue
            section, _, key = target[len("cfg."):].partition(".")
            check(section in sections, f"{target}: ConfigContainer has no section {section}")
            if not key:
                if section == "mixed_precision":
                    call = isinstance(st.value, ast.Call)
                    name = _dotted(st.value.func) if call else ast.literal_eval(st.value)
                    check(not call or name in imported, f"{name} is not imported")
                    mp = _bridge_tree("megatron.bridge.training.mixed_precision")
                    check(any(isinstance(f, ast.FunctionDef) and f.name == name
                              and any(_dotted(d) == "register" for d in f.decorator_list)
                              for f in mp.body), f"no mixed-precision recipe {name}")
                elif section == "comm_overlap":
                    cls = _dotted(st.value.func)
                    check(cls in imported, f"{cls} is not imported")
                    params = _class_fields(_bridge_tree(imported[cls][0]), imported[cls][1])
                    extra = {k.arg for k in st.value.keywords} - params
                    check(not extra, f"{cls} has no {extra}")
                    for k in st.value.keywords:
                        v[f"cfg.comm_overlap.{k.arg}"] = ast.literal_eval(k.value)
                elif section == "model":
                    cls = _dotted(st.value.func)
                    check(imported.get(cls) == ("megatron.bridge.models.gpt_provider", "GPTModelProvider"),
                          f"cfg.model = {cls}(...) is not Bridge's GPTModelProvider")
                    import torch.nn.functional as F
                    from megatron.core import activations
                    names = {"F": F, "squared_relu": activations.squared_relu}
                    provider = {k.arg: eval(compile(ast.Expression(k.value), path, "eval"),
                                            {"__builtins__": {}}, names)
                                for k in st.value.keywords}
                    extra = set(provider) - provider_fields
                    check(not extra, f"GPTModelProvider has no {extra}")
                elif section == "peft":
                    cls = _dotted(st.value.func)
                    check(imported.get(cls) == ("megatron.bridge.peft.lora", "LoRA"),
                          f"cfg.peft = {cls}(...) is not Bridge's LoRA")
                else:
                    raise AssertionError(f"{target}: pplan writes no whole section but these four")
                continue
            if "." in key:  # a section's nested config: cfg.dataset.packed_sequence_specs.X
                sub, _, key = key.rpartition(".")
                check(sub.split(".")[0] in fields.get(section, ()), f"{target}: no {sub} in {section}")
                section = f"{section}.{sub}"
            check(section in fields, f"{target}: pplan knows no Bridge definition for {section}")
            check(key in fields[section], f"{target}: Megatron-Bridge {BRIDGE_RELEASE} has no {key} there")
            with contextlib.suppress(ValueError):
                v[target] = ast.literal_eval(st.value)
        elif isinstance(st, ast.If):
            call = st.body[0].value if st.body and isinstance(st.body[0], ast.Expr) else None
            check(call is not None and _dotted(call.func) in imported,
                  "the __main__ block calls nothing imported")
        else:
            raise AssertionError(f"a statement pplan does not write: {ast.dump(st)[:60]}")
    check(recipe, f"no cfg = NAME_{kind}_config() line")
    check(_recipe_bf16_layers(v, "cfg.mixed_precision") == _bf16_layers(asked),
          f"bf16 end layers {_recipe_bf16_layers(v, 'cfg.mixed_precision')}, asked {_bf16_layers(asked)}")
    check(("cfg.mixed_precision = bf16_with_nvfp4_mixed()" in text)
          == ("--precision=nvfp4" in asked.get("switches", [])),
          "NVFP4's mixed-precision config where it was not asked, or not where it was")
    m = "cfg.model."
    if lora:
        check(recipe.startswith("_") == (provider is not None) and (provider is None or "cfg.peft" in text),
              "a LoRA job on the common defaults without cfg.peft = LoRA()")
        check("finetune(cfg, forward_step)" in text, "a LoRA job not run by finetune()")
        asked = _check_lora(v, "cfg", "dataset", asked)
    _check_degrees(v, m, "cfg.train.", asked)
    check(v.get("cfg.dataset.seq_length") == v.get("cfg.model.seq_length"),
          "the data's and the model's seq_length differ (ConfigContainer.validate refuses it)")
    check(v.get("cfg.optimizer.use_distributed_optimizer") == v.get("cfg.ddp.use_distributed_optimizer"),
          "the optimizer's and the DDP's use_distributed_optimizer differ")
    if provider is not None:
        # the provider's TransformerConfig, degrees and all, through
        # Megatron-Core's own __post_init__ checks
        import torch
        tc = {f.name for f in dc(TransformerConfig)}
        kw = {k: x for k, x in provider.items() if k in tc}
        kw.update({k[len(m):]: x for k, x in v.items() if k.startswith(m) and k[len(m):] in tc})
        kw["pipeline_dtype"] = kw["params_dtype"] = torch.bfloat16
        kw["bf16"] = True
        cfg = TransformerConfig(**kw)
        got = (cfg.num_layers, cfg.hidden_size, cfg.num_attention_heads, cfg.num_moe_experts or 0,
               v.get("cfg.tokenizer.vocab_size"))
        want = (pred["num_layers"], pred["hidden_size"], pred["num_attention_heads"],
                pred["num_experts"], pred["vocab_size"])
        check(got == want, f"layers, hidden, heads, experts, vocabulary {got}, pplan's {want}")
        return f"matches {BRIDGE_RELEASE}'s source: GPTModelProvider as TransformerConfig, {len(v)} overrides"
    return f"matches {BRIDGE_RELEASE}'s source: {recipe}, {len(v)} overrides"


CHECKS = (("torchtitan", "torchtitan.sh", check_torchtitan),
          ("megatron", "megatron.sh", check_megatron),
          ("deepspeed", "deepspeed.json", check_deepspeed),
          ("nemo", "nemo.sh", check_nemo),
          ("bridge", "bridge.py", check_bridge))


def main(d):
    global loaded, total
    cases = sorted(f[:-5] for f in os.listdir(d) if f.endswith(".case"))
    skipped = 0
    for c in cases:
        model, gpus, layout, *extra = open(os.path.join(d, c + ".case")).read().split()
        asked = layout_of(layout)
        asked["switches"] = extra
        pred = json.load(open(os.path.join(d, c + ".json")))["model"]
        for fw, ext, fn in CHECKS:
            path = os.path.join(d, f"{c}.{ext}")
            if not os.path.exists(path):
                continue
            total += 1
            try:
                msg = fn(path, int(gpus), asked, pred)
                if msg.startswith("skipped"):
                    skipped += 1
                    total -= 1
                else:
                    loaded += 1
                print(f"{model} {layout} {fw}: {msg}", flush=True)
            except (Exception, SystemExit) as e:  # the framework's own error is the finding
                failures.append(f"{model} {layout} {fw}")
                print(f"{model} {layout} {fw}: FAILED: {type(e).__name__}: {e}", flush=True)
    print(f"conformance: {loaded} of {total} configs load into the frameworks"
          f" ({skipped} not expressible, said in their notes)")
    return 0 if loaded == total and total > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
