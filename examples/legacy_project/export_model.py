"""Compile a small model ahead of time, the pre-2.6 way."""

import os

import torch
import torch._export


class TinyNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(10, 4)

    def forward(self, x):
        return torch.relu(self.fc(x))


def main():
    model = TinyNet().eval()
    example_inputs = (torch.randn(8, 10),)
    so_path = torch._export.aot_compile(
        model,
        example_inputs,
        options={"aot_inductor.output_path": os.path.join(os.getcwd(), "tiny.so")},
    )
    runner = torch._export.aot_load(so_path, "cpu")
    print(runner(*example_inputs))


if __name__ == "__main__":
    main()
