"""ResNet-50, torchvision topology (v1.5: the stride sits on the 3x3 conv of each bottleneck)."""
from __future__ import annotations

from ._builder import Graph

SEED = 50
LAYERS = (3, 4, 6, 3)


def _bottleneck(g: Graph, x, planes: int, stride: int, p: str):
    y = g.conv_bn_act(x, planes, 1, 1, "relu", p, ("conv1", "bn1", "relu"))
    y = g.conv_bn_act(y, planes, 3, stride, "relu", p, ("conv2", "bn2", "relu"))
    y = g.conv_bn_act(y, planes * 4, 1, 1, None, p, ("conv3", "bn3"))
    idt = x
    if stride != 1 or g.ch[x] != planes * 4:
        idt = g.conv_bn_act(x, planes * 4, 1, stride, None, p, ("downsample.0", "downsample.1"))
    return g.relu(g.add(y, idt, p + "add"), p + "relu")


def resnet50(batch: int = 1, size: int = 224, dynamic_batch: bool = False, num_classes: int = 1000,
             seed: int = SEED):
    """Input "input" [batch|N, 3, size, size] -> output "output" [batch|N, num_classes]."""
    if size < 32:
        raise ValueError("resnet50 needs size >= 32")
    n = "N" if dynamic_batch else batch
    g = Graph("resnet50", seed, calib=(1, 192, 192))
    x = g.input("input", [n, 3, size, size])
    x = g.relu(g.bn(g.conv(x, 64, 7, 2, 3, name="conv1"), "bn1"), "relu")
    x = g.maxpool(x, 3, 2, 1, "maxpool")
    for li, (planes, blocks) in enumerate(zip((64, 128, 256, 512), LAYERS)):
        for bi in range(blocks):
            stride = 2 if (li > 0 and bi == 0) else 1
            x = _bottleneck(g, x, planes, stride, f"layer{li + 1}.{bi}.")
    x = g.flatten(g.global_avgpool(x, "avgpool"), "flatten")
    g.gemm(x, num_classes, "fc", out="output")
    g.output("output", [n, num_classes])
    return g.build("ResNet-50 (torchvision topology), deterministic synthetic weights")
