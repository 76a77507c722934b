"""The premade estimators (TF 1.x's canned): linear, DNN, wide & deep and baseline models with TF1's heads."""
