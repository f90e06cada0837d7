"""DDP over the backend "xal", one rank per process (torchrun):

    XAL_BACKENDS=mock XAL_MOCK_DEVICES=1*a100-40g,1*mi250x \
    PYTHONPATH=frameworks/torch .venv/bin/torchrun --nproc-per-node 2 \
        frameworks/torch/examples/ddp_example.py
"""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import xal_torch  # registers backend "xal"

dist.init_process_group(backend="xal")
rank = dist.get_rank()
print(f"rank {rank} of {dist.get_world_size()} on {xal_torch.device_of()}", flush=True)

torch.manual_seed(0)
model = DDP(torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1)))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
g = torch.Generator().manual_seed(rank)
for step in range(20):
    x = torch.randn(64, 16, generator=g)
    loss = torch.nn.functional.mse_loss(model(x), x.sum(1, keepdim=True))
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0 and step % 5 == 4:
        print(f"step {step + 1}: loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
