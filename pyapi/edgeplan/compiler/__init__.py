"""The edgeplan compiler: ONNX import, passes, lowering (frontend.lower), memory planning and the plan writer.

Nothing here imports onnx at package import time; onnx is imported inside the compile paths only."""
