# GPU603 `per-sample-inference`: fixture. Sections start at `# %% valid:` (a look-alike that must
# stay silent) or `# %% invalid:` (every `# expect:` mark reported, nothing else). Each
# section is checked on its own, with this rule alone.

# %% invalid: case
import torch
model.eval()
preds = []
with torch.no_grad():
    for img in images:
        preds.append(model(img.unsqueeze(0).cuda()).argmax(1))  # expect: GPU603

# %% invalid: comprehension with x[None]
import torch
@torch.inference_mode()
def predict(net, samples):
    return [net(s[None]).softmax(-1) for s in samples]  # expect: GPU603

# %% invalid: indexed samples, view(1, ...)
import torch
def embed(model, dataset):
    out = []
    with torch.no_grad():
        for i in range(len(dataset)):
            x = dataset[i]["pixels"].to("cuda")
            out.append(model(x.view(1, 3, 224, 224)))  # expect: GPU603
    return out

# %% invalid: unsqueezed through a name
import torch
with torch.no_grad():
    for path in paths:
        x = transform(Image.open(path)).unsqueeze(0).cuda()
        scores[path] = model(x).softmax(1)  # expect: GPU603

# %% invalid: batch_size=1 loader
import torch
from torch.utils.data import DataLoader
test_loader = DataLoader(test_set, batch_size=1, shuffle=False)  # expect: GPU603 info
model.eval()
with torch.no_grad():
    for x, y in test_loader:
        correct += (model(x.cuda()).argmax(1) == y.cuda()).sum()

# %% invalid: torch.unsqueeze in a method
import torch
class Predictor:
    @torch.no_grad()
    def predict_all(self, texts):
        return [self.model(torch.unsqueeze(self.encode(t), 0)) for t in texts]  # expect: GPU603

# %% valid: batched
import torch
with torch.no_grad():
    for x, y in loader:
        preds = model(x.cuda()).argmax(1)

# %% valid: decoding with a cache
import torch
@torch.no_grad()
def greedy_decode(model, ids, steps):
    past = None
    for _ in range(steps):
        out = model(input_ids=ids[:, -1:].unsqueeze(0), past_key_values=past, use_cache=True)
        past = out.past_key_values
        ids = torch.cat([ids, out.logits[:, -1:].argmax(-1)], dim=-1)
    return ids

# %% valid: per-sample training is another matter
import torch
for x, y in dataset:
    loss = criterion(model(x.unsqueeze(0)), y.unsqueeze(0))
    loss.backward()
    optimizer.step()

# %% valid: an environment gives one observation at a time
import torch
obs = env.reset()
for t in range(1000):
    with torch.no_grad():
        action = policy_net(torch.as_tensor(obs)[None]).argmax().item()
    obs, reward, done, info = env.step(action)

# %% valid: adds a channel axis, not a batch axis
import torch
from torch.utils.data import DataLoader
loader = DataLoader(val_set, batch_size=64)
with torch.no_grad():
    for x, y in loader:
        out = model(x[:, None])

# %% valid: one image, outside the loop
import torch
image = load_image(path)
with torch.no_grad():
    logits = model(image.unsqueeze(0))
for label, p in zip(labels, logits.softmax(-1)[0]):
    print(label, float(p))

# %% valid: batch_size=1 for training
import torch
from torch.utils.data import DataLoader
loader = DataLoader(train_set, batch_size=1, shuffle=True)
for x, y in loader:
    criterion(model(x), y).backward()
    optimizer.step()

# %% invalid: a detector's per-image outputs, images run one at a time: info; a classifier's scores: reported
import torch


def evaluate_detector(dataset, model):
    model.eval()
    with torch.no_grad():
        for index in range(len(dataset)):
            data = dataset[index]
            scores, labels, boxes = model(data["img"].permute(2, 0, 1).cuda().float().unsqueeze(dim=0))  # expect: GPU603 info
            boxes /= data["scale"]


def evaluate_classifier(dataset, model):
    model.eval()
    with torch.no_grad():
        for index in range(len(dataset)):
            image, label = dataset[index]
            scores = model(image.cuda().unsqueeze(0))  # expect: GPU603
            print(scores.argmax(1) == label)

# %% invalid: one image picked by the loop's index, batched alone, wrapped, then moved
import torch
from torch.autograd import Variable


def test_net(net, testset, transform, cuda):
    for i in range(len(testset)):
        img = testset.pull_image(i)
        x = torch.from_numpy(transform(img)[0]).permute(2, 0, 1)
        x = Variable(x.unsqueeze(0))
        if cuda:
            x = x.cuda()
        with torch.no_grad():
            y = net(x)  # expect: GPU603
        write_detections(y.data)

# %% invalid: images read one per file at their own size: info; tensors of one size from a list: reported
import glob

import torch
from PIL import Image
from torchvision import transforms


@torch.no_grad()
def process_images(model, folder, samples):
    for path in glob.glob(folder + "/*.png"):
        image = Image.open(path).convert("RGB")
        width, height = image.size
        tensor = transforms.ToTensor()(image).unsqueeze(0).cuda()
        depth = model(tensor)  # expect: GPU603 info
        save(depth, width, height)
    for sample in samples:
        out = model(sample.unsqueeze(0).cuda())  # expect: GPU603
        save(out, 0, 0)

# %% valid: a smoothing filter run on each colour channel of one image
import torch


@torch.no_grad()
def box_filter_rgb(img, k):
    img = torch.from_numpy(img).float().cuda()
    conv = torch.nn.Conv2d(1, 1, k, padding=k // 2, bias=False).cuda()
    conv.weight[:] = 1.0 / (k * k)
    channels = []
    for i in range(3):
        channels.append(conv(img[:, :, i].unsqueeze(0).unsqueeze(0))[0, 0])
    return torch.stack(channels, dim=2).cpu().numpy()

# %% invalid: the same filter over the samples of a set
import torch


@torch.no_grad()
def box_filter_all(images, k):
    conv = torch.nn.Conv2d(1, 1, k, padding=k // 2, bias=False).cuda()
    out = []
    for img in images:
        out.append(conv(img.cuda().unsqueeze(0))[0])  # expect: GPU603
    return out

# %% invalid: a detector's output unpacked into boxes a statement later, or decoded from its heat map: info
import torch

model.eval()
for path, img in images:
    blob = torch.from_numpy(img).cuda().unsqueeze(0)
    with torch.no_grad():
        output = model(blob)  # expect: GPU603 info
    labels, boxes, scores = output
    keep.append(boxes[scores > 0.5])
for path, img in images:
    blob = torch.from_numpy(img).cuda().unsqueeze(0)
    with torch.no_grad():
        output = model(blob)[-1]  # expect: GPU603 info
        hm = output["hm"].sigmoid_()
        dets, inds = decode(hm, output["wh"], K=500)
    results.append(dets)

# %% invalid: the same output turned into class scores: a classifier run one image at a time
import torch

model.eval()
for path, img in images:
    blob = torch.from_numpy(img).cuda().unsqueeze(0)
    with torch.no_grad():
        output = model(blob)  # expect: GPU603
    probs = output.softmax(1)
    keep.append(probs)

# %% invalid: whole recordings of their own lengths, one per call, in a script that writes sound files: info
import soundfile as sf
import torch

model = load_model().cuda().eval()
with torch.no_grad():
    for idx in range(len(test_set)):
        mix, sources = test_set[idx]
        est = model(mix[None].cuda())  # expect: GPU603 info
        sf.write(f"est_{idx}.wav", est[0].cpu().numpy(), 16000)

# %% valid: pieces of a tensor cut with split or chunk are batches already; unsqueeze adds a dimension to each
import torch


@torch.no_grad()
def eval_points(model, points, batch_size=100000):
    occ = []
    for piece in torch.split(points, batch_size):
        occ.append(model(piece.unsqueeze(0).cuda()).squeeze(0).cpu())
    return torch.cat(occ)


@torch.no_grad()
def encode_refs(encoder, ref_imgs, batch_size):
    batches = ref_imgs.chunk(4)
    feats = []
    for b in batches:
        feats.append(encoder(b.unsqueeze(0)))
    return torch.cat(feats)


@torch.no_grad()
def encode_all(encoder, ref_imgs, batch_size):
    feats = []
    for i, batch in enumerate(ref_imgs.split(batch_size)):
        feats.append(encoder(batch.unsqueeze(0)))
    return feats

# %% invalid: the words of a string split are samples, one per call
import torch


@torch.no_grad()
def embed_words(model, sentence, vocab):
    vectors = []
    for word in sentence.split():
        vectors.append(model(torch.tensor(vocab[word]).cuda().unsqueeze(0)))  # expect: GPU603
    return vectors

# %% valid: a chunk of states given a leading axis repeated once per model of an ensemble
import numpy as np
import torch


class EnsembleDynamics:
    def __init__(self, ensemble_model, network_size=7):
        self.ensemble_model = ensemble_model
        self.network_size = network_size

    def predict(self, inputs, batch_size=1024):
        means = []
        for i in range(0, inputs.shape[0], batch_size):
            chunk = torch.from_numpy(inputs[i:min(i + batch_size, inputs.shape[0])]).float().cuda()
            mean, var = self.ensemble_model(chunk[None, :, :].repeat([self.network_size, 1, 1]))
            means.append(mean.detach().cpu().numpy())
        return np.hstack(means)

# %% invalid: one sample at a time, its channels repeated but its batch axis still one long
import torch


def embed(model, images):
    out = []
    with torch.no_grad():
        for img in images:
            out.append(model(img[None].repeat(1, 3, 1, 1).cuda()))  # expect: GPU603
    return out

# %% invalid: each file read and resized to a full frame is information; resized to a thumbnail it is reported
import cv2
import numpy as np
import torch


def segment_folder(model, image_list, args):
    model.eval()
    for i, name in enumerate(image_list):
        img = cv2.imread(name)
        img = img.astype(np.float32) / 255
        img = cv2.resize(img, (args.width, args.height))
        img_tensor = torch.from_numpy(img.transpose((2, 0, 1)))
        tensor = torch.unsqueeze(img_tensor, 0).cuda()
        out = model(tensor)  # expect: GPU603 info
        cv2.imwrite(name.replace(".png", "_seg.png"), out[0].argmax(0).byte().cpu().numpy())


def classify_folder(model, image_list):
    model.eval()
    labels = []
    for i, name in enumerate(image_list):
        img = cv2.imread(name)
        img = img.astype(np.float32) / 255
        img = cv2.resize(img, (32, 32))
        img_tensor = torch.from_numpy(img.transpose((2, 0, 1)))
        tensor = torch.unsqueeze(img_tensor, 0).cuda()
        labels.append(model(tensor).argmax(1))  # expect: GPU603
    return labels
