"""GPU603 `per-sample-inference`: model called one sample at a time in an inference loop."""

from __future__ import annotations
import re
from typing import Iterator, List, Optional, Set, Tuple
import libcst as cst
from advisor.findings import Severity
from advisor.model import CallSite, FileModel, FunctionInfo, LoopInfo
from advisor.model.file_model import call_argument
from advisor.model.names import dotted_name, last_segment, variable_inner
from advisor.model.subtree import iter_names, reads_any
from advisor.model.walk import children
from advisor.rules.base import Report, Rule, snippet
from advisor.model.loaders import loaders_iterated
from advisor.model.names import DATALOADER
from advisor.rules.inference.model_calls import CACHE_KEYWORDS, TORCH_TEXT, derived_from, grown_names, marker_sites, feeds_training, framework_owned, grad_disabled, model_calls, torch_file


def _singleton_batch(expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """The per-sample value under `x.unsqueeze(0)`, `x[None]`, `x.view(1, ...)`, `torch.unsqueeze(x, 0)`
    somewhere in a chain like `img.unsqueeze(0).to(device)`; None when there is none."""
    node = expr
    while True:
        if type(node) is cst.Call:
            func = node.func
            if type(func) is cst.Attribute:
                method = func.attr.value
                args = node.args
                if method == "unsqueeze" and args and _is_zero(args[0].value):
                    return func.value
                if method in ("view", "reshape") and len(args) >= 2 and _is_one(args[0].value):
                    return func.value
                if method == "unsqueeze" and not type(func.value) in (cst.Call, cst.Attribute, cst.Subscript, cst.Name):
                    return None
                if last_segment(dotted_name(func)) == "unsqueeze" and len(args) == 2 and _is_zero(args[1].value):
                    return args[0].value  # torch.unsqueeze(x, 0)
                if method in ("repeat", "expand", "tile") and args and not _leading_one(args):
                    return None  # `x[None].repeat(n_models, 1, 1)`: the new axis is made n long
                node = func.value
                continue
            return None
        if type(node) is cst.Subscript:
            first = node.slice[0].slice if node.slice else None
            if type(first) is cst.Index and type(first.value) is cst.Name and first.value.value == "None":
                return node.value
            node = node.value
            continue
        if type(node) is cst.Attribute:
            node = node.value
            continue
        return None


def _leading_one(args) -> bool:
    """The first size `repeat`/`expand` is given (`repeat(1, 3, 1, 1)`, `repeat([1, 3])`) is 1 (or
    -1, kept): the leading axis stays one long."""
    first = args[0].value
    if type(first) in (cst.List, cst.Tuple):
        if not first.elements:
            return False
        first = first.elements[0].value
    if type(first) is cst.UnaryOperation and type(first.operator) is cst.Minus and _is_one(first.expression):
        return True
    return _is_one(first)


def _singleton(model: FileModel, expr: cst.BaseExpression, site: CallSite):
    """The per-sample value batched alone in ``expr``, or in the value of the name ``expr`` is,
    when that name was bound in the same loop (`x = tf(img).unsqueeze(0).cuda(); model(x)`),
    also through a move or a wrapper that rebinds it (`x = Variable(x.unsqueeze(0))`, then
    `if cuda: x = x.cuda()`): every binding that reaches the call must batch one sample.
    (value, context, order) of where the sample is read; None when nothing batches one."""
    inner = _singleton_batch(expr)
    if inner is not None:
        return inner, site.ctx, site.order
    if type(expr) is not cst.Name or site.ctx.loop is None:
        return None
    return _bound_singleton(model, expr.value, site.ctx, site.order, site.ctx.loop, 3)


def _bound_singleton(model: FileModel, name: str, ctx, order: float, loop: LoopInfo, depth: int):
    found = [a for a in model.reaching(name, ctx, order) if a.order < order]
    if not found or depth == 0:
        return None
    inner = None
    for assignment in found:
        value = assignment.value
        if value is None or assignment.index is not None or assignment.ctx.loop is None or not assignment.ctx.loop.within(loop):
            return None
        value = variable_inner(model, value)
        this = _singleton_batch(value)
        if this is not None:
            this = (this, assignment.ctx, assignment.order)
        else:
            source = _moved_name(value)
            if source != name:
                return None
            this = _bound_singleton(model, name, assignment.ctx, assignment.order, loop, depth - 1)
            if this is None:
                return None
        inner = inner or this
    return inner


def _moved_name(value: cst.BaseExpression) -> Optional[str]:
    """`x` in `x.cuda()`, `x.to(device)`, `x.float()`: the same sample, moved or cast."""
    while type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value in (
        "cuda", "to", "float", "half", "contiguous",
    ):
        value = value.func.value
    return value.value if type(value) is cst.Name else None


_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


def _comprehension_targets(info: FunctionInfo, call: cst.Call) -> Set[str]:
    """The names bound by the comprehensions around ``call`` (walks one function's body)."""
    stack: List[Tuple[cst.CSTNode, frozenset]] = [(info.node.body, frozenset())]
    while stack:
        node, names = stack.pop()
        if node is call:
            return set(names)
        if isinstance(node, _COMPREHENSIONS):
            bound = set(names)
            for_in: Optional[cst.CompFor] = node.for_in
            while for_in is not None:
                bound.update(iter_names(for_in.target))
                for_in = for_in.inner_for_in
            names = frozenset(bound)
        if type(node) in (cst.FunctionDef, cst.ClassDef):
            continue
        stack.extend((child, names) for child in children(node))
    return set()


# Names of a detector's or a segmenter's per-image outputs: images of different sizes, each
# resized by its own scale, are usually run one at a time, and their kernels are not small.
_PER_IMAGE_OUTPUT = re.compile(r"(^|_)(boxes|bboxes|box|dets|detections|masks|segms|keypoints|polygons)$", re.IGNORECASE)


def _per_image_outputs(model: FileModel, call: cst.Call) -> bool:
    """The call's value is unpacked into detection outputs (`scores, labels, boxes = model(...)`),
    also a few statements later in the same pass (`output = model(x)`, then `labels, boxes,
    scores = output`; `output = model(blob)[-1]`, `hm = output["hm"]`, then `dets, inds =
    decode(hm, wh)`)."""
    statement = model.statement_of.get(id(call))
    if not type(statement) is cst.SimpleStatementLine:
        return False
    for small in statement.body:
        value = small.value if type(small) is cst.Assign else None
        if value is call or (type(value) is cst.Subscript and value.value is call):
            names = {name for t in small.targets for name in iter_names(t.target)}
            return any(_PER_IMAGE_OUTPUT.search(name) for name in names) or _unpacked_later(model, call, names)
    return False


def _unpacked_later(model: FileModel, call: cst.Call, names: Set[str]) -> bool:
    """A later assignment of the same loop pass binds a per-image output from what ``names``
    hold, directly or through names bound from them."""
    site = model.site_of(call)
    if site is None or site.ctx.loop is None:
        return False
    loop = site.ctx.loop
    later = sorted(
        (a for (scope, _), found in model.facts.assignments.items() if scope == site.ctx.scope for a in found
         if a.order > site.order and a.value is not None and a.ctx.loop is not None and a.ctx.loop.within(loop)),
        key=lambda a: a.order,
    )
    derived = set(names)
    for assignment in later[:40]:
        if not reads_any(assignment.value, derived):
            continue
        if _PER_IMAGE_OUTPUT.search(assignment.target):
            return True
        derived.add(assignment.target)
    return False


# Readers of one image file: each image has the size it was saved with.
_IMAGE_READERS = frozenset({
    "PIL.Image.open", "cv2.imread", "torchvision.io.read_image", "torchvision.io.decode_image",
    "imageio.imread", "imageio.v2.imread", "imageio.v3.imread", "skimage.io.imread", "matplotlib.pyplot.imread",
})


def _own_sized_images(model: FileModel, loop: Optional[LoopInfo]) -> Optional[str]:
    """The loop reads an image file per item and takes that image's own size (`w, h =
    image.size`, `h, w = image.shape[:2]`): images of different sizes, which a batch would
    first have to resize to one. Or it resizes the image it read to a full frame
    (`cv2.resize(img, (args.width, args.height))`, no small size written out): one such image
    fills the GPU, and its decoding and writing in the loop dominate."""
    if loop is None:
        return None
    for site in model.facts.calls:
        if site.ctx.loop is None or not site.ctx.loop.within(loop) or site.assigned_to is None:
            continue
        if model.imports.qualify(site.node.func) not in _IMAGE_READERS and not _reads_image_chain(model, site.node):
            continue
        name = site.assigned_to
        if _resized_to_a_frame(model, name, loop):
            return "resized to a full frame, which fills the GPU on its own"
        for (_, target), found in model.facts.assignments.items():
            for a in found:
                value = a.value
                while type(value) is cst.Subscript:
                    value = value.value
                if (type(value) is cst.Attribute and value.attr.value in ("size", "shape")
                        and dotted_name(value.value) == name and a.ctx.loop is not None and a.ctx.loop.within(loop)):
                    return "at its own size: a batch would first resize them to one"
    return None


# Below this many pixels a side, an image resized for the model is a thumbnail, not a frame.
_FRAME_SIDE = 224


def _resized_to_a_frame(model: FileModel, name: str, loop: LoopInfo) -> bool:
    """`cv2.resize(img, size)` of the image ``name`` in the loop, to a size that is no small
    literal (a setting, or sides of at least `_FRAME_SIDE`)."""
    for site in model.calls_to("cv2.resize"):
        if site.ctx.loop is None or not site.ctx.loop.within(loop) or len(site.node.args) < 2:
            continue
        if dotted_name(site.node.args[0].value) != name:
            continue
        size = site.node.args[1].value
        sides = [e.value for e in size.elements] if type(size) in (cst.Tuple, cst.List) else []
        if any(type(side) is cst.Integer and side.evaluated_value < _FRAME_SIDE for side in sides):
            continue
        return True
    return False


# Audio input and output packages: a script that reads or writes sound files handles whole
# utterances or songs, each of its own length.
_AUDIO_PACKAGES = frozenset({"soundfile", "torchaudio", "librosa", "scipy.io.wavfile", "pydub", "audioread"})


def _own_length_audio(model: FileModel) -> bool:
    """The file reads or writes sound files (`sf.write`, `torchaudio.load`): each item it runs
    the model on is a whole recording of its own length, which a batch would have to pad."""
    return any(
        qual.startswith(package + ".") for qual in model.facts.calls_by_qualname for package in _AUDIO_PACKAGES
    )


def _reads_image_chain(model: FileModel, call: cst.Call) -> bool:
    """`Image.open(path).convert("RGB")`: a method chain that starts with an image reader."""
    node: cst.BaseExpression = call
    while type(node) is cst.Call and type(node.func) is cst.Attribute and type(node.func.value) is cst.Call:
        node = node.func.value
        if model.imports.qualify(node.func) in _IMAGE_READERS:
            return True
    return False


def _few_items(loop: LoopInfo) -> bool:
    """`for i in range(3):`: a handful of passes fixed in the code (colour channels, scales,
    the two halves of a pair), not a stream of samples a batch could hold."""
    node = loop.node
    if type(node) is not cst.For or type(node.iter) is not cst.Call or dotted_name(node.iter.func) != "range":
        return False
    args = node.iter.args
    if not 1 <= len(args) <= 2 or any(a.keyword is not None or a.star for a in args):
        return False
    bounds = [a.value for a in args]
    if not all(type(b) is cst.Integer for b in bounds):
        return False
    values = [int(b.evaluated_value) for b in bounds]
    return (values[-1] - (values[0] if len(values) == 2 else 0)) <= _FEW


# Passes few enough to be a structure of the data rather than its samples.
_FEW = 4


# Calls that cut a tensor into pieces along a dimension: each piece is a batch of its own.
_CHUNKERS = frozenset({"split", "chunk", "tensor_split"})


def _chunks(model: FileModel, expr: cst.BaseExpression) -> bool:
    """`torch.split(points, 100000)`, `imgs.chunk(4)`: pieces of a tensor, each many rows."""
    if type(expr) is cst.Call and dotted_name(expr.func) in ("enumerate", "zip") and expr.args:
        expr = expr.args[0].value
    if type(expr) is not cst.Call or type(expr.func) is not cst.Attribute:
        return False
    qual = model.imports.qualify(expr.func)
    if expr.func.attr.value not in _CHUNKERS or not (qual is None or qual.startswith("torch.")):
        return False
    if expr.func.attr.value == "split" and qual is None:
        # `line.split()`, `text.split(",")`: a string's words, each one sample.
        first = expr.args[0].value if expr.args else None
        return first is not None and type(first) not in (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)
    return True


def _over_chunks(model: FileModel, loop: LoopInfo) -> bool:
    """The loop goes over the pieces a tensor is cut into (also through a name bound to them):
    `x.unsqueeze(0)` of a piece adds a dimension to a batch, it does not make one of a sample."""
    node = loop.node
    if type(node) is not cst.For:
        return False
    iterable = node.iter
    if _chunks(model, iterable):
        return True
    if type(iterable) is cst.Name:
        found = model.reaching(iterable.value, loop.ctx, loop.start)
        return bool(found) and all(a.value is not None and a.index is None and _chunks(model, a.value) for a in found)
    return False


def _is_zero(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.Integer and expr.value == "0"


def _is_one(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.Integer and expr.value == "1"


class PerSampleInference(Rule):
    code = "GPU603"
    name = "per-sample-inference"
    summary = "model called one sample at a time in an inference loop"
    what = """
        Outside training code, a model called inside a loop on a single sample made into a
        batch of one (`model(x.unsqueeze(0))`, `model(x[None])`, `model(x.view(1, ...))`),
        where `x` comes from the loop's own items (its target, or an item indexed by it).
        In a file that reads or writes sound files (`soundfile`, `torchaudio`, `librosa`), each
        call runs a whole recording of its own length, which a batch would have to pad: information.
        Also, as information, a `DataLoader(..., batch_size=1)` iterated with autograd off by a
        loop that calls a model. Autoregressive decoding (calls passing a cache, or growing the
        input with `torch.cat`) and reinforcement-learning loops that step an environment are
        left alone, and so is a loop of a few passes fixed in the code (`for c in range(3):`,
        the channels of one image), and a `for` loop over the pieces a tensor is cut into
        (`for piece in torch.split(points, n):`: each piece is a batch already), and so is a new
        leading axis repeated to more than one (`x[None].repeat(n_models, 1, 1)`: a copy per
        model of an ensemble). A call whose value is unpacked into a detector's per-image outputs
        (`scores, labels, boxes = model(...)`, also a few statements later in the same pass:
        `output = model(x)` then `labels, boxes, scores = output`, or boxes decoded from
        `output["hm"]`) is information only: images of different sizes
        are usually run one at a time, and a full-size image is no tiny launch. So is a loop
        that reads each image from its own file and takes that image's size (`w, h =
        image.size`): images of different sizes; or resizes it to a full frame
        (`cv2.resize(img, (args.width, args.height))`, no side under 224 written out): one such
        image fills the GPU, and reading and writing files dominates the loop.
    """
    why = """
        A GPU runs a batch of one nearly as slowly as a batch of hundreds: each call is a chain
        of small kernel launches and tiny matrix products that leave most of the device idle,
        so the loop is bound by Python and launch overhead. Stacking the samples (or letting a
        DataLoader batch them) runs the same work in a few large calls.
    """
    example = """
        with torch.no_grad():
            preds = [model(img.unsqueeze(0).cuda()).argmax(1) for img in images]
            for img in images:
                preds.append(model(img.unsqueeze(0).cuda()).argmax(1))
    """
    instead = """
        loader = DataLoader(images, batch_size=256)
        with torch.no_grad():
            preds = [model(batch.cuda()).argmax(1) for batch in loader]
    """
    hint = "batch the samples (`torch.stack`, or a DataLoader with a real batch size) and call the model once per batch"
    fix_safety = """
        No automatic fix. Batching changes the loop's structure (collecting samples, splitting the
        outputs again) and must respect memory limits and samples of different sizes.
    """
    references = (
        (
            "torch.utils.data: loading batched and non-batched data",
            "https://docs.pytorch.org/docs/stable/data.html#loading-batched-and-non-batched-data",
        ),
        ("torch.stack", "https://docs.pytorch.org/docs/stable/generated/torch.stack.html"),
        (
            "CUDA semantics: asynchronous execution",
            "https://docs.pytorch.org/docs/stable/notes/cuda.html#asynchronous-execution",
        ),
    )
    requires = (TORCH_TEXT, ("unsqueeze", "None", "view(1", "reshape(1", "DataLoader"))

    def check(self, model: FileModel) -> Iterator[Report]:
        if not torch_file(model):
            return
        markers = marker_sites(model)
        reported: Set[int] = set()
        for site in model_calls(model):
            loop = site.ctx.loop
            key = id(loop) if loop is not None else id(site.node)
            if key in reported or (loop is not None and (loop.env_step or _few_items(loop) or _over_chunks(model, loop))):
                continue
            if any(a.keyword is not None and a.keyword.value in CACHE_KEYWORDS for a in site.node.args):
                continue
            inputs = [
                a.value
                for a in site.node.args
                if a.keyword is None or a.keyword.value in ("input", "x", "input_ids", "pixel_values", "inputs")
            ]
            singles = [(value, _singleton(model, value, site)) for value in inputs]
            singles = [(value, inner) for value, inner in singles if inner is not None]
            if not singles:
                continue
            if feeds_training(model, site, markers) or framework_owned(model, site.ctx.function):
                continue
            items: Set[str] = set()
            if loop is None:
                if site.ctx.function is None:
                    continue
                items = _comprehension_targets(site.ctx.function, site.node)
                if not items:
                    continue
            grown = grown_names(model, loop) if loop is not None else set()
            if loop is not None and self._recurrent(model, site, loop, [v for v, _ in singles]):
                continue
            for value, (inner, read_ctx, read_order) in singles:
                if derived_from(model, value, grown, site.ctx, site.order):
                    continue
                if not self._per_item(model, inner, site, items, 0, read_ctx, read_order):
                    continue
                reported.add(key)
                how = _own_sized_images(model, loop)
                if how is not None:
                    yield self.report(
                        site.node,
                        "`{expression}` runs the model on one image per call (each read from its own file, {how})",
                        severity=Severity.INFO,
                        data={"expression": snippet(model, site.node), "how": how},
                    )
                    break
                if _own_length_audio(model):
                    yield self.report(
                        site.node,
                        "`{expression}` runs the model on one recording per call (sound files of their "
                        "own lengths: a batch would have to pad them)",
                        severity=Severity.INFO,
                        data={"expression": snippet(model, site.node)},
                    )
                    break
                if _per_image_outputs(model, site.node):
                    yield self.report(
                        site.node,
                        "`{expression}` runs the model on one image per call (a detector's outputs: "
                        "images of different sizes are often run one at a time)",
                        severity=Severity.INFO,
                        data={"expression": snippet(model, site.node)},
                    )
                    break
                yield self.report(
                    site.node,
                    "`{expression}` runs the model on one sample per call: the GPU idles "
                    "between tiny launches",
                    data={"expression": snippet(model, site.node)},
                )
                break
        yield from self._loaders(model, markers)

    def _recurrent(self, model: FileModel, site: CallSite, loop: LoopInfo, samples: List[cst.BaseExpression]) -> bool:
        """Another argument is state the loop carries from step to step (`h` in
        `out, h = rnn(x[t].unsqueeze(0), h)`): the steps depend on each other and cannot be batched."""
        scope = site.ctx.scope
        for arg in site.node.args:
            if any(arg.value is sample for sample in samples):
                continue
            for name in iter_names(arg.value):
                if any((a.ctx.loop is not None and a.ctx.loop.within(loop)) for a in model.facts.assignments.get((scope, name), ())):
                    return True
        return False

    def _per_item(self, model: FileModel, expr: cst.BaseExpression, site: CallSite, items: Set[str], depth: int = 0,
                  ctx=None, order: Optional[float] = None) -> bool:
        """The value comes from the items iterated: loop or comprehension targets, names derived
        from them, or an element indexed by a loop target (`dataset[i]`, `dataset.pull_image(i)`).
        A name is followed to the binding that reaches it where it is read."""
        ctx = site.ctx if ctx is None else ctx
        order = site.order if order is None else order
        targets: Set[str] = set(items)
        batch: Set[str] = set(items)
        loop = site.ctx.loop
        while loop is not None:
            targets.update(loop.targets)
            batch |= loop.batch_names
            loop = loop.parent
        stack: List[cst.CSTNode] = [expr]
        while stack:
            node = stack.pop()
            if type(node) is cst.Name:
                if node.value in batch:
                    return True
                if depth < 3 and node.value not in targets and site.ctx.loop is not None:
                    reaching = model.reaching_assignment(node.value, ctx, order)
                    if (
                        reaching is not None
                        and reaching.value is not None
                        and (reaching.ctx.loop is not None and reaching.ctx.loop.within(site.ctx.loop))
                        and self._per_item(model, reaching.value, site, items, depth + 1, reaching.ctx, reaching.order)
                    ):
                        return True
            elif type(node) is cst.Subscript:
                if any(n in targets for element in node.slice for n in iter_names(element)):
                    return True
                stack.append(node.value)
            elif type(node) is cst.Call:
                if type(node.func) is cst.Attribute and any(
                    a.keyword is None and type(a.value) is cst.Name and a.value.value in targets for a in node.args
                ):
                    return True  # `testset.pull_image(i)`: the item the loop's index picks
                stack.extend(a.value for a in node.args)
                stack.append(node.func)
            elif type(node) is cst.Attribute:
                stack.append(node.value)
        return False

    def _loaders(self, model: FileModel, markers: List[CallSite]) -> Iterator[Report]:
        ones = [s for s in model.calls_to(DATALOADER) if self._batch_of_one(s)]
        if not ones:
            return
        calls = model_calls(model)
        for loop in model.facts.loops:
            if model.is_training_loop(loop):
                continue
            found = [s for s in loaders_iterated(model, loop)[0] if s in ones]
            if not found:
                continue
            inside = [c for c in calls if (c.ctx.loop is not None and c.ctx.loop.within(loop))]
            if not inside or any(feeds_training(model, c, markers) for c in inside):
                continue
            if not grad_disabled(model, inside[0].ctx):
                continue
            for site in found:
                ones.remove(site)
                yield self.report(
                    site.node,
                    "this DataLoader hands the model one sample per batch (`batch_size=1`) for inference: "
                    "a larger batch keeps the GPU busy",
                    severity=Severity.INFO,
                )

    def _batch_of_one(self, site: CallSite) -> bool:
        arg = call_argument(site.node, "batch_size", 1)
        return arg is not None and _is_one(arg.value)
