"""torch.profiler's view of small TorchScript models: the reference side of
test_torch_profiler_agreement.py.

Run by Debian's python3 (python3-torch 1.13, the libtorch that neuronprof
links), not the .venv:

    /usr/bin/python3 tests/interop/torch_reference.py OUTDIR ITERATIONS

For each model writes OUTDIR/<model>.pt, a scripted module whose forward()
takes no arguments (the inputs are its attributes, so the C++ runner needs
no input files), and OUTDIR/<model>.json: torch.profiler's events of
ITERATIONS runs of the loaded file (record_shapes, with_flops), each with
its name, input shapes, FLOPs, times (us) and thread, as libtorch
reported them (no tree: torch.profiler builds one from the times).
"""

import json
import os
import sys
from typing import List

import torch
from torch import nn

WARMUP = 3  # The profiling executor specializes after its first runs.
LR = 0.1


class Cnn(nn.Module):
  """Conv with batch norm, a mean pool and a linear head."""

  def __init__(self):
    super().__init__()
    self.conv = nn.Conv2d(3, 8, 3, padding=1)
    self.bn = nn.BatchNorm2d(8)
    self.fc = nn.Linear(8, 10)

  def forward(self, x: torch.Tensor) -> torch.Tensor:
    x = torch.relu(self.bn(self.conv(x)))
    return self.fc(x.mean((2, 3)))


class Lstm(nn.Module):

  def __init__(self):
    super().__init__()
    self.lstm = nn.LSTM(16, 32, batch_first=True)

  def forward(self, x: torch.Tensor) -> torch.Tensor:
    return self.lstm(x)[0]


class Bag(nn.Module):

  def __init__(self):
    super().__init__()
    self.bag = nn.EmbeddingBag(100, 16, mode="mean")
    self.offsets = torch.tensor([0, 5, 9, 14])

  def forward(self, x: torch.Tensor) -> torch.Tensor:
    return self.bag(x, self.offsets)


class TrainLoss(nn.Module):
  """Forward and loss of one training step (backward and SGD run outside)."""

  def __init__(self):
    super().__init__()
    self.fc1 = nn.Linear(16, 32)
    self.fc2 = nn.Linear(32, 4)
    self.target = torch.tensor([0, 1, 2, 3, 0, 1, 2, 3])

  def forward(self, x: torch.Tensor) -> torch.Tensor:
    logits = self.fc2(torch.relu(self.fc1(x)))
    return nn.functional.cross_entropy(logits, self.target)


class WithInput(nn.Module):
  """`model` applied to a stored input: forward() takes no arguments."""

  def __init__(self, model: nn.Module, x: torch.Tensor):
    super().__init__()
    self.model = model
    self.x = x

  def forward(self) -> torch.Tensor:
    return self.model(self.x)


def models():
  torch.manual_seed(0)
  encoder = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64,
                                       batch_first=True)
  return {
      "cnn": (Cnn().eval(), torch.randn(2, 3, 16, 16)),
      "transformer": (encoder.eval(), torch.randn(2, 8, 32)),
      "lstm": (Lstm().eval(), torch.randn(2, 5, 16)),
      "embedding_bag": (Bag().eval(), torch.randint(0, 100, (20,))),
      "train_step": (TrainLoss().train(), torch.randn(8, 16)),
  }


def run(module, train: bool) -> None:
  """One iteration; the C++ runner (torchscript_runner.cc) does the same."""
  if not train:
    with torch.no_grad():
      module()
    return
  module().backward()
  with torch.no_grad():
    for p in module.parameters():
      p.add_(p.grad, alpha=-LR)
      p.grad.zero_()


def events(prof) -> List[dict]:
  """libtorch's records as torch.profiler collected them, before its Python
  EventList rebuilds a tree from microsecond times and folds a lone child
  named like its parent into it (profiler_util.py, _remove_dup_nodes)."""
  rows = []
  for e in prof.profiler.kineto_results.events():
    if e.device_type() != torch.autograd.DeviceType.CPU:
      continue
    rows.append({
        "name": e.name(),
        "input_shapes": e.shapes(),
        "flops": e.flops(),
        "start_us": e.start_us(),
        "end_us": e.start_us() + e.duration_us(),
        "thread": e.start_thread_id(),
    })
  return rows


def main() -> None:
  outdir, iterations = sys.argv[1], int(sys.argv[2])
  torch.set_num_threads(1)
  for name, (model, x) in models().items():
    path = os.path.join(outdir, name + ".pt")
    torch.jit.script(WithInput(model, x)).save(path)
    module = torch.jit.load(path)
    train = name == "train_step"
    for _ in range(WARMUP):
      run(module, train)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                record_shapes=True, with_flops=True) as prof:
      for _ in range(iterations):
        run(module, train)
    with open(os.path.join(outdir, name + ".json"), "w") as f:
      json.dump({"iterations": iterations, "events": events(prof)}, f)


if __name__ == "__main__":
  main()
