"""Word2Vec: skip-gram embeddings trained with NCE (TF1's word2vec_basic), shown in TensorBoard's projector."""

from __future__ import annotations

import math
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import Field

import tftk as tf
from tftk.config import ModelParams
from tftk.datasets import DataSet
from tftk.user_input import UserInputError
from tftk.ops import summary_ops  # not tf.summary: see models/image_classifier.py

from models.basic_model import BasicModel
from models.text_corpus import (CATEGORIES, SYNTHETIC, build_vocabulary, read_sentences, skipgram_pairs,
                                synthetic_sentences)

__all__ = ["Word2Vec", "Word2VecParams"]


class Word2VecParams(ModelParams):
    """The `model:` section of Word2Vec."""

    embedding_size: int = Field(16, gt=0, description="dimension of the embedding vectors")
    vocabulary_size: int = Field(100, gt=2, description="most common words kept (the rest become UNK)")
    skip_window: int = Field(2, gt=0, description="context words taken on each side of a word")
    num_sampled: int = Field(8, gt=0, description="negative examples NCE samples per batch")
    sentences: int = Field(2000, gt=0, description="sentences generated for dataset synthetic_text")


class Word2Vec(BasicModel):
    """Skip-gram word embeddings trained with nce_loss on a text corpus (`dataset`: synthetic_text or a .txt file)."""

    Params = Word2VecParams
    METRICS = ("neighbour_accuracy",)

    @classmethod
    def check_config(cls, config) -> None:
        super().check_config(config)
        dataset = config.dataset
        if dataset != SYNTHETIC and not (dataset.endswith(".txt") and Path(dataset).is_file()):
            raise UserInputError(f"dataset: Word2Vec trains on '{SYNTHETIC}' or an existing .txt file, got '{dataset}'")

    def set_model_props(self) -> None:
        self.check_config(self.config)
        dataset = self.config.dataset
        if dataset == SYNTHETIC:
            self.sentences = synthetic_sentences(self.params.sentences, seed=0)
        else:
            self.sentences = read_sentences(dataset)
        self.vocabulary = build_vocabulary(self.sentences, self.params.vocabulary_size)
        self.vocabulary_size = len(self.vocabulary)
        if self.params.num_sampled >= self.vocabulary_size:
            raise UserInputError(f"model.num_sampled ({self.params.num_sampled}) must be smaller than the "
                                 f"vocabulary ({self.vocabulary_size} words)")
        self.word_ids = {word: i for i, word in enumerate(self.vocabulary)}

    @cached_property
    def train_data(self) -> DataSet:
        centers, contexts = skipgram_pairs(self.sentences, self.vocabulary, self.params.skip_window)
        return DataSet(centers, contexts, seed=self.random_seed)

    def build_graph(self, graph: tf.Graph) -> None:
        size, dim = self.vocabulary_size, self.params.embedding_size
        self.train_inputs = tf.placeholder(tf.int32, shape=[None], name="train_inputs")
        self.train_labels = tf.placeholder(tf.int64, shape=[None, 1], name="train_labels")
        with tf.name_scope("embeddings"):
            self.embeddings = tf.Variable(tf.random_uniform([size, dim], -1.0, 1.0), name="embeddings")
            embed = tf.nn.embedding_lookup(self.embeddings, self.train_inputs)
        with tf.name_scope("weights"):
            nce_weights = tf.Variable(tf.truncated_normal([size, dim], stddev=1.0 / math.sqrt(dim)), name="nce_weights")
        with tf.name_scope("biases"):
            nce_biases = tf.Variable(tf.zeros([size]), name="nce_biases")
        with tf.name_scope("loss"):
            self.loss = tf.reduce_mean(tf.nn.nce_loss(weights=nce_weights, biases=nce_biases, labels=self.train_labels,
                                                      inputs=embed, num_sampled=self.params.num_sampled,
                                                      num_classes=size))
        summary_ops.scalar("loss", self.loss)
        with tf.name_scope("optimizer"):
            self.train_op = tf.train.GradientDescentOptimizer(self.lr).minimize(self.loss, global_step=self.global_step)
        norm = tf.sqrt(tf.reduce_sum(tf.square(self.embeddings), 1, keepdims=True))
        self.normalized_embeddings = self.embeddings / norm
        self.summary = summary_ops.merge_all()

    def learn_from_epoch(self, step: int) -> dict[str, float]:
        inputs, labels = self.train_data.next_batch(self.batch_size)
        feed_dict = {self.train_inputs: inputs, self.train_labels: labels}
        if self.sw is not None and self.is_log_step(step):
            _, loss_value, summary = self.sess.run([self.train_op, self.loss, self.summary], feed_dict)
            self.sw.add_summary(summary, step)
        else:
            _, loss_value = self.sess.run([self.train_op, self.loss], feed_dict)
        return {"loss": float(loss_value)}

    def nearest(self, word_ids: np.ndarray, k: int = 1) -> np.ndarray:
        """The ids of the `k` words closest (cosine) to each of `word_ids`, themselves excluded."""
        vectors = self.sess.run(self.normalized_embeddings)
        similarity = vectors[word_ids] @ vectors.T
        similarity[np.arange(len(word_ids)), word_ids] = -np.inf
        return np.argsort(-similarity, axis=1, kind="stable")[:, :k]

    def evaluate(self) -> dict[str, float]:
        """neighbour_accuracy: how often a category word's nearest word is of its category (chance ~ 0.1)."""
        category_of = {self.word_ids[w]: name for name, words in CATEGORIES.items() for w in words if w in self.word_ids}
        metrics = {}
        if category_of:
            ids = np.array(sorted(category_of))
            nearest = self.nearest(ids, k=1)[:, 0]
            metrics["neighbour_accuracy"] = float(np.mean([category_of.get(int(n)) == category_of[int(i)]
                                                           for i, n in zip(ids, nearest)]))
        probe = np.arange(1, min(6, self.vocabulary_size))
        for word_id, close in zip(probe, self.nearest(probe, k=5)):
            self.log(f"Nearest to {self.vocabulary[word_id]}: {', '.join(self.vocabulary[c] for c in close)}")
        self._write_projector()
        return metrics

    def _write_projector(self) -> None:
        """The embeddings, labelled by word, for TensorBoard's projector (tensorboardX add_embedding)."""
        if self.sw is None:
            return
        if getattr(self, "_projector", None) is None:
            from tensorboardX import SummaryWriter

            self._projector = SummaryWriter(str(self.result_dir), filename_suffix=".projector")
        self._projector.add_embedding(self.sess.run(self.normalized_embeddings), metadata=self.vocabulary,
                                      global_step=self.step, tag="embeddings")

    def close(self) -> None:
        if getattr(self, "_projector", None) is not None:
            self._projector.close()
        super().close()

    def infer(self, inputs: np.ndarray) -> np.ndarray:
        """The nearest word to each input word (words, or their vocabulary ids)."""
        inputs = np.asarray(inputs).reshape(-1)
        if inputs.dtype.kind in "US":
            unknown = [str(w) for w in inputs if str(w) not in self.word_ids]
            if unknown:
                raise UserInputError(f"words not in the vocabulary: {', '.join(unknown[:5])}")
            ids = np.array([self.word_ids[str(w)] for w in inputs])
        elif inputs.dtype.kind in "ui" or (inputs.dtype.kind == "f" and np.all(inputs == np.round(inputs))):
            ids = inputs.astype(np.int64)
            if ids.size and (ids.min() < 0 or ids.max() >= self.vocabulary_size):
                raise UserInputError(f"word ids must be in 0..{self.vocabulary_size - 1}")
        else:
            raise UserInputError(f"Word2Vec infers from words or word ids, got dtype {inputs.dtype}")
        return np.array([self.vocabulary[i] for i in self.nearest(ids, k=1)[:, 0]])

    @classmethod
    def random_params(cls, rng: np.random.Generator) -> dict[str, Any]:
        return {"lr": float(10 ** rng.uniform(-1, 0.5)),
                "model.embedding_size": int(rng.choice([8, 16, 32])),
                "model.num_sampled": int(rng.choice([4, 8, 16]))}
