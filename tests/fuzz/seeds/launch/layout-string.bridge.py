cfg = llama3_70b_pretrain_config()
cfg.model.pipeline_model_parallel_size = 8
cfg.model.pipeline_model_parallel_layout = "Et*9|(t*10|)*6t*11L"
cfg.model.num_layers_in_first_pipeline_stage = None
cfg.model.mtp_num_layers = 1
cfg.train.global_batch_size = 64
cfg.comm_overlap = CommOverlapConfig(tp_comm_overlap=False, overlap_grad_reduce=True)
