"""TensorFlow's protocol buffers with TF's own field numbers, so files written by TF load here."""
