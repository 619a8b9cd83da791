# ERROR: Experiment declares no stage
