"""What a project `nn.Module` class is built from, and whether train and eval mode can make it
compute anything different.

A class is *mode-free* when every call in its body (its `__init__`, helper methods, `forward`)
builds a `torch.nn` layer known to behave the same in both modes (convolutions, linear layers,
activations, pooling, layer/group norm, pixel shuffle, ...), a container of those, a project
class that is itself mode-free (depth-bounded), or is a plain computation (a method on a value,
a `torch` function, a builtin). Anything else counts as mode-dependent: dropout, batch norm,
instance norm tracking running statistics, recurrent layers and attention with dropout, a layer
from another library (timm, torchvision), a class or helper the analysis cannot read, a read of
`self.training`, functional dropout or batch norm, or a base class other than `nn.Module`.
"""

from __future__ import annotations

from typing import Dict, Optional, Set

import libcst as cst

from advisor.model.facts import Context
from advisor.model.instances import INSTANCES
from advisor.model.names import dotted_name
from advisor.model.vocabulary import TYPED_TENSOR
from advisor.model.walk import children

_MAX_DEPTH = 4

# torch.nn layers whose forward is the same in train and eval mode.
_MODE_FREE = frozenset(
    """
    Module Sequential ModuleList ModuleDict ParameterList ParameterDict Parameter Identity
    Linear Bilinear LazyLinear Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d
    LazyConv1d LazyConv2d LazyConv3d
    ReLU ReLU6 LeakyReLU PReLU RReLU ELU SELU CELU GELU SiLU Mish Sigmoid Tanh Softmax Softmax2d
    LogSoftmax Softmin Softplus Softshrink Hardshrink Hardtanh Hardswish Hardsigmoid LogSigmoid
    Tanhshrink Softsign Threshold GLU
    PixelShuffle PixelUnshuffle Upsample UpsamplingNearest2d UpsamplingBilinear2d ChannelShuffle
    MaxPool1d MaxPool2d MaxPool3d AvgPool1d AvgPool2d AvgPool3d AdaptiveAvgPool1d AdaptiveAvgPool2d
    AdaptiveAvgPool3d AdaptiveMaxPool1d AdaptiveMaxPool2d AdaptiveMaxPool3d LPPool1d LPPool2d
    MaxUnpool1d MaxUnpool2d MaxUnpool3d FractionalMaxPool2d
    Flatten Unflatten Embedding EmbeddingBag LayerNorm GroupNorm RMSNorm LocalResponseNorm
    ZeroPad1d ZeroPad2d ZeroPad3d ConstantPad1d ConstantPad2d ConstantPad3d ReflectionPad1d
    ReflectionPad2d ReflectionPad3d ReplicationPad1d ReplicationPad2d ReplicationPad3d CircularPad1d
    CircularPad2d CircularPad3d Fold Unfold CosineSimilarity PairwiseDistance
    InstanceNorm1d InstanceNorm2d InstanceNorm3d
    """.split()
)
# (Instance norm counts as mode-free even with `track_running_stats=True`: normalising each
# sample by its own statistics, as training mode does, is what image generators want at test
# time too; eval mode's running statistics are the change they avoid.)
# torch.nn layers that hold no parameter (no weight to record an autograd graph through).
_PARAMETER_FREE = frozenset(
    """
    Module Sequential ModuleList ModuleDict Identity Flatten Unflatten
    ReLU ReLU6 LeakyReLU RReLU ELU SELU CELU GELU SiLU Mish Sigmoid Tanh Softmax Softmax2d LogSoftmax
    Softmin Softplus Softshrink Hardshrink Hardtanh Hardswish Hardsigmoid LogSigmoid Tanhshrink
    Softsign Threshold GLU Dropout Dropout1d Dropout2d Dropout3d AlphaDropout FeatureAlphaDropout
    PixelShuffle PixelUnshuffle Upsample UpsamplingNearest2d UpsamplingBilinear2d ChannelShuffle
    MaxPool1d MaxPool2d MaxPool3d AvgPool1d AvgPool2d AvgPool3d AdaptiveAvgPool1d AdaptiveAvgPool2d
    AdaptiveAvgPool3d AdaptiveMaxPool1d AdaptiveMaxPool2d AdaptiveMaxPool3d LPPool1d LPPool2d
    ZeroPad1d ZeroPad2d ZeroPad3d ConstantPad1d ConstantPad2d ConstantPad3d ReflectionPad1d
    ReflectionPad2d ReflectionPad3d ReplicationPad1d ReplicationPad2d ReplicationPad3d Fold Unfold
    CosineSimilarity PairwiseDistance
    """.split()
)
# Layers whose mode matters only with a non-default argument: (keyword, position, default is free).
_ARGUMENT_DEPENDENT = {
    "RNN": ("dropout", None),
    "LSTM": ("dropout", None),
    "GRU": ("dropout", None),
    "MultiheadAttention": ("dropout", 2),
}
_MODE_FUNCTIONS = ("torch.nn.functional.dropout", "torch.nn.functional.alpha_dropout",
                   "torch.nn.functional.feature_alpha_dropout", "torch.nn.functional.batch_norm",
                   "torch.nn.functional.instance_norm", "torch.nn.functional.rrelu")


def _argument(call: cst.Call, keyword: str, position: Optional[int]) -> Optional[cst.Arg]:
    for index, arg in enumerate(call.args):
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg
        if arg.keyword is None and arg.star == "" and position is not None and index == position:
            return arg
    return None


def _free_with_arguments(call: cst.Call, keyword: str, position: Optional[int]) -> bool:
    if any(arg.star for arg in call.args):
        return False  # **kwargs may carry the argument
    arg = _argument(call, keyword, position)
    if arg is None:
        return True
    value = arg.value
    if type(value) is cst.Name:
        return value.value == "False"
    if type(value) in (cst.Integer, cst.Float):
        return float(value.value) == 0
    return False


def _built_from_parameters(node) -> Set[str]:
    """Parameters of the methods (other than `forward`) that may hand in a layer class to call."""
    functions = [node] if type(node) is cst.FunctionDef else [
        s for s in node.body.body if type(s) is cst.FunctionDef and s.name.value != "forward"
    ]
    out: Set[str] = set()
    for function in functions:
        params = function.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            out.add(param.name.value)
        for star in (params.star_arg, params.star_kwarg):
            if type(star) is cst.Param:
                out.add(star.name.value)
    out.discard("self")
    return out


def _root(expr: cst.BaseExpression) -> Optional[str]:
    while type(expr) in (cst.Attribute, cst.Call, cst.Subscript):
        expr = expr.func if type(expr) is cst.Call else expr.value
    return expr.value if type(expr) is cst.Name else None


# Libraries whose calls compute arrays or numbers, and build no layer.
_NUMERIC_LIBRARIES = frozenset({"numpy", "scipy", "librosa", "math", "random", "os"})
# Readers of data files: plain containers and arrays, unless the object stores what they read
# as an attribute (a pickled module could then be a submodule).
_DATA_READERS = frozenset({"pickle.load", "pickle.loads", "json.load", "json.loads", "yaml.safe_load", "yaml.load"})


class _Walker:
    def __init__(self, parameters: bool = False) -> None:
        self.seen: Set[int] = set()
        self.params: Set[str] = set()
        self.parameters = parameters  # asked: holds no parameter (else: computes the same in both modes)

    def class_free(self, model, info, depth: int) -> bool:
        if id(info.node) in self.seen:
            return True  # already being checked higher up
        if depth > _MAX_DEPTH:
            return False
        self.seen.add(id(info.node))
        for base in info.bases:
            if base in ("torch.nn.Module", "object"):
                continue
            if not self._callee_free(model, base, depth):
                return False
        return self._walk(model, info.node, depth)

    def _callee_free(self, model, name: str, depth: int) -> bool:
        """A class or helper, named as the source names it, that builds nothing mode-dependent."""
        local = model.facts.classes.get(name)
        if local is not None:
            return self.class_free(model, local, depth + 1)
        symbol = model.symbol(name) if "." in name or name not in model.facts.functions else None
        if symbol is not None and symbol.kind == "class":
            return self.class_free(symbol.model, symbol.info, depth + 1)
        if symbol is not None and symbol.kind == "function" and symbol.info is not None:
            return self._function_free(symbol.model, symbol.info.node, depth + 1)
        function = model.facts.functions.get(name)
        if function is not None:
            return self._function_free(model, function.node, depth + 1)
        return False

    def _function_free(self, model, node: cst.FunctionDef, depth: int) -> bool:
        if id(node) in self.seen:
            return True
        if depth > _MAX_DEPTH:
            return False
        self.seen.add(id(node))
        return self._walk(model, node, depth)

    def _walk(self, model, node, depth: int) -> bool:
        outer, self.params = self.params, _built_from_parameters(node)
        try:
            return self._body_free(model, node.body, depth)
        finally:
            self.params = outer

    def _body_free(self, model, body: cst.CSTNode, depth: int) -> bool:
        stack = [body]
        while stack:
            node = stack.pop()
            if type(node) is cst.Attribute and node.attr.value == "training" and not self.parameters:
                return False  # forward branches on the mode
            if type(node) is cst.Call and not self._call_free(model, node, depth):
                return False
            if type(node) in (cst.Name, cst.Attribute) and not self._reference_free(model, node):
                return False
            if type(node) is cst.ClassDef and node is not body:
                return False  # a nested class: not followed
            if type(node) is cst.Assign and not self._assigned_free(model, node):
                return False
            stack.extend(children(node))
        return True

    def _reference_free(self, model, node) -> bool:
        """`norm_layer=nn.BatchNorm2d`: a mode-dependent layer class named without being called."""
        qual = model.imports.qualify(node)
        if qual is None or not qual.startswith("torch.nn.") or qual.count(".") != 2:
            return True
        layer = qual.rsplit(".", 1)[-1]
        if self.parameters:
            return not layer[:1].isupper() or layer in _PARAMETER_FREE
        return not layer[:1].isupper() or layer in _MODE_FREE or layer in _ARGUMENT_DEPENDENT

    def _assigned_free(self, model, node: cst.Assign) -> bool:
        """`self.x = registry.build(cfg)`: a submodule from a method of some other object is unknown."""
        if not any(type(t.target) is cst.Attribute and _root(t.target) == "self" for t in node.targets):
            return True
        value = node.value
        if not type(value) is cst.Call or not type(value.func) is cst.Attribute:
            return True
        if model.imports.qualify(value.func) in _DATA_READERS:
            return False  # `self.net = pickle.load(f)`: whatever the file held
        return model.imports.qualify(value.func) is not None or _root(value.func) == "self"

    def _call_free(self, model, call: cst.Call, depth: int) -> bool:
        func = call.func
        if self.parameters and (
            any(a.keyword is not None and a.keyword.value == "requires_grad" for a in call.args)
            or (type(func) is cst.Attribute and func.attr.value == "register_parameter")
        ):
            return False  # a tensor or parameter autograd tracks
        qual = model.imports.qualify(func)
        if qual is not None:
            if qual.startswith("torch.nn.") and qual.count(".") == 2 and qual.rsplit(".", 1)[-1][:1].isupper():
                layer = qual.rsplit(".", 1)[-1]
                if self.parameters:
                    return layer in _PARAMETER_FREE
                if layer in _MODE_FREE:
                    return True
                rule = _ARGUMENT_DEPENDENT.get(layer)
                return rule is not None and _free_with_arguments(call, *rule)
            if qual.startswith(_MODE_FUNCTIONS):
                return self.parameters
            if qual.startswith("torch.") and qual.rsplit(".", 1)[-1][:1].islower():
                return True  # a torch function: torch.cat, F.relu, nn.init.orthogonal_
            if qual.startswith("torch.distributions."):
                return True  # `Categorical(probs)`: a distribution over the outputs, no layer
            if qual.startswith("torch."):
                # `torch.FloatTensor([0, 0, 0, 1])`: the legacy typed constructors make plain
                # tensors, never a parameter.
                # So does `Variable(t)` of PyTorch 0.3 code: the tensor itself (one made to
                # require grad is caught above).
                return qual in ("torch.Tensor", "torch.Size", "torch.Generator", "torch.device",
                                "torch.autograd.Variable", "torch.autograd.variable.Variable") or bool(
                    TYPED_TENSOR.fullmatch(qual))
            if qual.split(".", 1)[0] in _NUMERIC_LIBRARIES or qual in _DATA_READERS:
                return True  # `librosa.filters.mel(...)`, `np.hanning(n)`: arrays, never a layer
            return self._callee_free(model, qual, depth)
        if type(func) is cst.Name:
            name = func.value
            if name in model.facts.classes or name in model.facts.functions:
                return self._callee_free(model, name, depth)
            return name not in self.params  # a builtin or a value built elsewhere, not a class handed in
        return True  # a method on a value (`self.conv(x)`, `x.view(...)`, `self._make_layer(...)`)


def layers_mode_free(model, expr: cst.BaseExpression, ctx: Context, order: float) -> bool:
    """The model is built from torch.nn layers only, each the same in train and eval mode
    (`model = nn.Linear(784, 10)`, `nn.Sequential(nn.Linear(...), nn.ReLU())`), on every path
    that reaches the read: a local name, or an attribute of the object (`self.value_net`)."""
    name = dotted_name(expr)
    if name is None or not (type(expr) is cst.Name or (name.startswith("self.") and name.count(".") == 1)):
        return False
    # `self.value_net = nn.Linear(latent_dim, 1)` in the class's builder, read in another method
    reach = model.bindings.reaching(name, ctx, order)
    found = reach.assignments
    if not found or not reach.closed:
        return False
    walker = _Walker()
    for assignment in found:
        value = assignment.value
        if value is None or assignment.index is not None:
            return False
        while type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value in _PLACING:
            value = value.func.value  # `nn.Linear(4, 2).to(device)`
        if not type(value) is cst.Call or not (model.imports.qualify(value.func) or "").startswith("torch.nn."):
            return False
        stack: list = [value]
        while stack:
            node = stack.pop()
            if type(node) is cst.Call and not walker._call_free(model, node, 0):
                return False
            stack.extend(children(node))
    return True


# Methods that place or cast a module and hand it back.
_PLACING = frozenset({"to", "cuda", "cpu", "float", "half", "double", "bfloat16"})


def class_mode_free(model, info) -> bool:
    """The project class `info` (defined in `model`) computes the same in train and eval mode."""
    return _class_answer(model, info, "mode-free-classes", False)


def _class_answer(model, info, key: str, parameters: bool) -> bool:
    """A walk over the class and what it builds, once per class (it reads other files: the
    answers are dropped with the model's other shared facts when one of them changes)."""
    memo: Dict[int, bool] = model.shared(key, lambda m: {})
    known = memo.get(id(info))
    if known is None:
        known = memo[id(info)] = _Walker(parameters).class_free(model, info, 0)
    return known


def mode_free(model, expr: cst.BaseExpression, ctx: Context, order: float) -> bool:
    """Every class the value can hold an instance of is known, of the project, and mode-free."""
    found, known = model.values.ask(INSTANCES, expr, ctx, order)
    return known and bool(found) and all(class_mode_free(owner, info) for owner, info in found)


def class_parameter_free(model, info) -> bool:
    """The project class `info` (defined in `model`) builds no layer with parameters and no
    `nn.Parameter`, itself or down its blocks: calling it records no graph for inputs that do
    not require grad."""
    return _class_answer(model, info, "parameter-free-classes", True)


def parameter_free(model, expr: cst.BaseExpression, ctx: Context, order: float) -> bool:
    """Every class the value can hold an instance of is known, of the project, and holds no parameter."""
    found, known = model.values.ask(INSTANCES, expr, ctx, order)
    return known and bool(found) and all(class_parameter_free(owner, info) for owner, info in found)
