"""`tensorflow.examples.tutorials.mnist`: the tutorial MNIST reader (`input_data`) and model (`mnist`)."""
