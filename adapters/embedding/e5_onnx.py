"""Adapter helper: multilingual-e5-small's forward pass as an ONNX graph run by onnxruntime.

The graph is built in memory from the same dequantised weights as the numpy pass (e5_numpy.py),
so nothing is downloaded or converted ahead of time: the word table stays 4-bit and its rows are
expanded per batch in numpy (the graph's input is the summed word, position and type embeddings),
and the graph holds the embedding norm, the 12 encoder layers and a masked mean pooling. Windows
of long texts, their weighted average and the L2 norm stay in NumpyE5.embed, shared by both.

onnxruntime needs a rectangular batch: each pass's sequences are sorted by length and cut into
padded batches whose padding stays small; the mask keeps padded keys out of the softmax and
padded rows out of the mean.

`contrib=True` uses onnxruntime's fused Attention op (com.microsoft domain) instead of the
attention in standard ops; onnxruntime's optimiser fuses the norms and the GELU either way.
"""

from __future__ import annotations

import math
import queue
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from memlane.adapters.embedding.e5_file import E5Weights, Floats
from memlane.adapters.embedding.e5_numpy import NumpyE5

# A padded batch may hold this share of padding before a new batch is started.
_PADDING_SHARE = 0.15
# Arrays from this many elements are handed to onnxruntime in place when asked (the matrices).
_EXTERNAL_FROM = 4096
# opset 17 has LayerNormalization; the erf form of GELU is fused by onnxruntime's optimiser.
_OPSET = 17


def build_graph(
    weights: E5Weights,
    *,
    contrib: bool = False,
    external: dict[str, npt.NDArray[Any]] | None = None,
) -> bytes:
    """The serialised ONNX model: inputs `embedded` (B, S, H) float32 and `mask` (B, S) float32
    (1 for tokens, 0 for padding); output `means` (B, H), the masked mean of the last states.

    With `external`, the weight matrices are left out of the bytes (marked as external data) and
    put in that dict by name, for SessionOptions.add_external_initializers: onnxruntime then
    reads the numpy arrays in place instead of a protobuf copy of each."""
    from onnx import TensorProto, helper, numpy_helper

    hidden, heads = weights.hidden, weights.heads
    nodes: list[Any] = []
    inits: list[Any] = []

    def const(name: str, value: npt.ArrayLike, dtype: Any = np.float32) -> str:
        array = np.asarray(value, dtype=dtype)  # 0-d stays 0-d (Gather's index)
        if external is None or array.size < _EXTERNAL_FROM:
            inits.append(numpy_helper.from_array(array, name))
            return name
        tensor = TensorProto(
            name=name,
            dims=array.shape,
            data_type=helper.np_dtype_to_tensor_dtype(array.dtype),
            data_location=TensorProto.EXTERNAL,
        )
        # A placeholder location: add_external_initializers replaces it before anything reads it.
        for key, entry in (("location", "memlane-in-memory"), ("length", str(array.nbytes))):
            tensor.external_data.add(key=key, value=entry)
        inits.append(tensor)
        external[name] = np.ascontiguousarray(array)
        return name

    def node(op: str, inputs: list[str], output: str, **attrs: Any) -> str:
        domain = "com.microsoft" if op in _CONTRIB_OPS else ""
        nodes.append(helper.make_node(op, inputs, [output], name=output, domain=domain, **attrs))
        return output

    def matmul(x: str, matrix: Floats, bias: Floats, name: str) -> str:
        product = node("MatMul", [x, const(name + ".w", matrix)], name + ".mm")
        return node("Add", [product, const(name + ".b", bias)], name)

    def layer_norm(x: str, norm: tuple[Floats, Floats], name: str) -> str:
        gamma, beta = const(name + ".g", norm[0]), const(name + ".beta", norm[1])
        return node("LayerNormalization", [x, gamma, beta], name, axis=-1, epsilon=weights.eps)

    x = layer_norm("embedded", weights.embed_norm, "emb.ln")
    # Additive mask over the keys, (B, 1, 1, S): 0 for tokens, -1e9 for padding (exp gives 0).
    blocked = node("Sub", [const("one", 1.0), "mask"], "mask.blocked")
    bias = node("Mul", [blocked, const("minus", -1e9)], "mask.bias")
    key_bias = node("Unsqueeze", [bias, const("axes12", [1, 2], np.int64)], "mask.keys")
    key_index = node("Cast", ["mask"], "mask.int", to=TensorProto.INT32)
    for i, layer in enumerate(weights.layers):
        p = f"l{i}"
        if contrib:
            # onnxruntime's fused attention: the packed QKV product, the masked softmax and the
            # value product in one kernel (it applies the 1/sqrt(head size) scale itself).
            context = node(
                "Attention",
                [x, const(p + ".qkv.w", layer.qkv), const(p + ".qkv.b", layer.qkv_bias), key_index],
                p + ".context",
                num_heads=heads,
            )
        else:
            context = _attention(
                node, const, matmul, x, layer.qkv, layer.qkv_bias, key_bias, heads, p
            )
        attended = matmul(context, layer.out, layer.out_bias, p + ".ao")
        x = layer_norm(node("Add", [x, attended], p + ".res1"), layer.attn_norm, p + ".aln")
        inner = matmul(x, layer.ffn_in, layer.ffn_in_bias, p + ".fi")
        # GELU, erf form: x * (1 + erf(x / sqrt 2)) / 2 (onnxruntime fuses it to one kernel).
        scaled = node("Div", [inner, const(p + ".sqrt2", math.sqrt(2.0))], p + ".g1")
        erf = node("Erf", [scaled], p + ".g2")
        plus = node("Add", [erf, const(p + ".g_one", 1.0)], p + ".g3")
        gated = node("Mul", [inner, plus], p + ".g4")
        gelu = node("Mul", [gated, const(p + ".half", 0.5)], p + ".gelu")
        ffn = matmul(gelu, layer.ffn_out, layer.ffn_out_bias, p + ".fo")
        x = layer_norm(node("Add", [x, ffn], p + ".res2"), layer.ffn_norm, p + ".oln")
    weights_3d = node("Unsqueeze", ["mask", const("axis2", [2], np.int64)], "mask.3d")
    kept = node("Mul", [x, weights_3d], "pool.kept")
    total = node("ReduceSum", [kept, const("axis1", [1], np.int64)], "pool.sum", keepdims=0)
    count = node("ReduceSum", ["mask", const("axis1b", [1], np.int64)], "pool.count", keepdims=1)
    node("Div", [total, count], "means")
    graph = helper.make_graph(
        nodes,
        "multilingual-e5-small",
        [
            helper.make_tensor_value_info("embedded", TensorProto.FLOAT, ["B", "S", hidden]),
            helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["B", "S"]),
        ],
        [helper.make_tensor_value_info("means", TensorProto.FLOAT, ["B", hidden])],
        inits,
    )
    opsets = [helper.make_opsetid("", _OPSET)]
    if contrib:
        opsets.append(helper.make_opsetid("com.microsoft", 1))
    model = helper.make_model(graph, opset_imports=opsets, producer_name="memlane")
    model.ir_version = 8
    data: bytes = model.SerializeToString()
    return data


_CONTRIB_OPS = {"Attention"}


def _attention(
    node: Any,
    const: Any,
    matmul: Any,
    x: str,
    qkv_matrix: Floats,
    qkv_bias: Floats,
    key_bias: str,
    heads: int,
    p: str,
) -> str:
    """Self-attention in standard ops: (B, S, H) -> (B, S, H)."""
    hidden = qkv_matrix.shape[0]
    head_size = hidden // heads
    scale = np.float32(1.0 / math.sqrt(head_size))
    qkv_w = qkv_matrix.copy()
    qkv_b = qkv_bias.copy()
    # The softmax scale folded into the query weights, as the numpy pass scales the queries.
    qkv_w[:, :hidden] *= scale
    qkv_b[:hidden] *= scale
    qkv = matmul(x, qkv_w, qkv_b, p + ".qkv")
    split = node(
        "Reshape", [qkv, const(p + ".shape5", [0, 0, 3, heads, head_size], np.int64)], p + ".5d"
    )
    # (B, S, 3, heads, hs) -> (3, B, heads, S, hs)
    stacked = node("Transpose", [split], p + ".qkvT", perm=[2, 0, 3, 1, 4])
    q = node("Gather", [stacked, const(p + ".i0", 0, np.int64)], p + ".q", axis=0)
    k = node("Gather", [stacked, const(p + ".i1", 1, np.int64)], p + ".k", axis=0)
    v = node("Gather", [stacked, const(p + ".i2", 2, np.int64)], p + ".v", axis=0)
    k_t = node("Transpose", [k], p + ".kT", perm=[0, 1, 3, 2])
    scores = node("MatMul", [q, k_t], p + ".scores")
    masked = node("Add", [scores, key_bias], p + ".masked")
    probs = node("Softmax", [masked], p + ".probs", axis=-1)
    mixed = node("MatMul", [probs, v], p + ".mixed")
    mixed_t = node("Transpose", [mixed], p + ".mixedT", perm=[0, 2, 1, 3])
    shape = const(p + ".shape3", [0, 0, hidden], np.int64)
    return str(node("Reshape", [mixed_t, shape], p + ".context"))


class OnnxE5(NumpyE5):
    """NumpyE5's windowing and pooling, with onnxruntime running each pass's forward."""

    def __init__(
        self,
        weights: E5Weights,
        *,
        workers: int = 1,
        intra_threads: int = 1,
        sessions: int = 1,
        contrib: bool = False,
        arena: bool = True,
        one_per_run: bool = False,
        model: bytes | None = None,
    ) -> None:
        """`workers` threads share `sessions` sessions (run() is thread-safe and drops the GIL),
        each running its products on `intra_threads` threads."""
        import onnxruntime as ort

        super().__init__(weights, workers=workers)
        options = ort.SessionOptions()
        options.intra_op_num_threads = intra_threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Without the arena, activations go back to the system after each run instead of
        # staying reserved at the largest batch's size.
        options.enable_cpu_mem_arena = arena
        if intra_threads == 1:
            # No spinning thread pool to wait on: the worker threads are the parallelism.
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        arrays: dict[str, npt.NDArray[Any]] = {}
        if model is None:
            model = build_graph(weights, contrib=contrib, external=arrays)
        if arrays:
            names = list(arrays)
            # Kept alive here: the sessions read these buffers for as long as they run.
            self._values = [ort.OrtValue.ortvalue_from_numpy(arrays[n]) for n in names]
            options.add_external_initializers(names, self._values)
        self._sessions: queue.SimpleQueue[Any] = queue.SimpleQueue()
        for _ in range(sessions):
            self._sessions.put(
                ort.InferenceSession(
                    model, sess_options=options, providers=["CPUExecutionProvider"]
                )
            )
        self._shared = self._sessions.get() if sessions == 1 else None
        # A dynamically quantised graph (bench/studies/embed_paths.py's int8 paths) quantises each
        # product's input with one scale over the whole tensor: in a padded batch a text's
        # vector would depend on its neighbours (measured: cosine 0.995 between a text alone
        # and the same text among others). One sequence a run keeps each text's vector its own.
        self._one_per_run = one_per_run

    def _run_pass(self, sequences: list[list[int]]) -> Floats:
        return self._forward(sequences)

    def _run(self, feeds: dict[str, Floats]) -> Floats:
        if self._shared is not None:
            (out,) = self._shared.run(["means"], feeds)
            return np.asarray(out)
        session = self._sessions.get()
        try:
            (out,) = session.run(["means"], feeds)
        finally:
            self._sessions.put(session)
        return np.asarray(out)

    def _forward(self, sequences: list[list[int]]) -> Floats:
        w = self._w
        vocabulary = w.vocabulary
        framed = [[vocabulary.bos, *seq, vocabulary.eos] for seq in sequences]
        means = np.empty((len(framed), w.hidden), dtype=np.float32)
        batches = [[i] for i in range(len(framed))] if self._one_per_run else None
        for batch in batches or _padded_batches(framed):
            width = max(len(framed[i]) for i in batch)
            embedded = np.zeros((len(batch), width, w.hidden), dtype=np.float32)
            mask = np.zeros((len(batch), width), dtype=np.float32)
            for row, i in enumerate(batch):
                ids = np.asarray(framed[i], dtype=np.int64)
                n = len(ids)
                embedded[row, :n] = w.word_rows(ids)
                embedded[row, :n] += w.positions[:n]
                embedded[row, :n] += w.token_type
                mask[row, :n] = 1.0
            means[batch] = self._run({"embedded": embedded, "mask": mask})
        return means


def _padded_batches(sequences: Sequence[list[int]]) -> list[list[int]]:
    """Indices grouped longest first, a new group when padding would pass its share."""
    order = sorted(range(len(sequences)), key=lambda i: -len(sequences[i]))
    batches: list[list[int]] = []
    current: list[int] = []
    real = 0
    for i in order:
        n = len(sequences[i])
        if current:
            width = len(sequences[current[0]])
            if (real + n) < (1 - _PADDING_SHARE) * width * (len(current) + 1):
                batches.append(current)
                current, real = [], 0
        current.append(i)
        real += n
    if current:
        batches.append(current)
    return batches
