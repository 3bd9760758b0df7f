#!/usr/bin/python3
"""Writes a synthetic torch.profiler (Kineto 2.x) trace of a given size for
import benchmarks: training steps of ops with shapes, cudaLaunchKernel calls,
kernels, memcpys, memsets, ac2g flows and allocator [memory] events, laid out
as Kineto writes them (one member block per event, µs with 3 decimals).

  /usr/bin/python3 bench/formats/gen_kineto_trace.py --mb 500 -o /tmp/kineto_500mb.json

The file is written to the path given (keep it out of the repository).
"""

import argparse
import random

PID = 4242
TID = 4243
OPS = [
    ("aten::linear", "[[256, 1024], [1024, 1024], [1024]]", '["float", "float", "float"]'),
    ("aten::addmm", "[[1024], [256, 1024], [1024, 1024], [], []]", '["float", "float", "float", "Scalar", "Scalar"]'),
    ("aten::relu", "[[256, 1024]]", '["float"]'),
    ("aten::mm", "[[256, 1024], [1024, 1024]]", '["float", "float"]'),
    ("aten::add_", "[[1024, 1024], [1024, 1024], []]", '["float", "float", "Scalar"]'),
]
KERNELS = [
    "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_16x4_tn_align4>(cutlass_80_tensorop_s1688gemm_128x128_16x4_tn_align4::Params)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)",
    "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<at::native::AddFunctor<float> >(at::TensorIteratorBase&, at::native::AddFunctor<float> const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl<at::native::AddFunctor<float> >(at::TensorIteratorBase&, at::native::AddFunctor<float> const&)::{lambda(int)#1})",
]


def us(ns):
    return "%d.%03d" % (ns // 1000, ns % 1000)


class Gen:
    def __init__(self, out):
        self.out = out
        self.t = 1_000_000
        self.corr = 1
        self.ext = 1
        self.first = True
        self.written = 0

    def ev(self, text):
        s = ("" if self.first else ",") + text
        self.first = False
        self.out.write(s)
        self.written += len(s)

    def x(self, cat, name, pid, tid, ts, dur, args):
        self.ev('\n  {\n    "ph": "X", "cat": "%s", "name": "%s", "pid": %d, "tid": %d,\n'
                '    "ts": %s, "dur": %s,\n    "args": {\n      %s\n    }\n  }'
                % (cat, name, pid, tid, us(ts), us(dur), args))

    def step(self, n):
        start = self.t
        self.t += 500
        step_at = self.t
        events = []
        for i in range(40):
            name, dims, types = random.choice(OPS)
            ext = self.ext
            self.ext += 1
            op_start = self.t
            self.t += 3000
            corr = self.corr
            self.corr += 1
            self.x("cpu_op", name, PID, TID, op_start, 6000,
                   '"External id": %d,"Record function id": 0, "Sequence number": %d, "Fwd thread id": 0, '
                   '"Concrete Inputs": ["", "", ""], "Input Dims": %s, "Input type": %s' % (ext, ext, dims, types))
            launch = self.t
            self.x("cuda_runtime", "cudaLaunchKernel", PID, TID, launch, 2500,
                   '"External id": %d,"cbid": 211, "correlation": %d' % (ext, corr))
            self.t += 3000
            k_start = launch + 20000 + i * 100
            kname = KERNELS[i % len(KERNELS)]
            self.x("kernel", kname, 0, 7, k_start, 4800,
                   '"External id": %d,"queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": %d, '
                   '"registers per thread": 128, "shared memory": 49152, "blocks per SM": 1.939394, '
                   '"warps per SM": 15.515152, "grid": [256, 1, 1], "block": [256, 1, 1], '
                   '"est. achieved occupancy %%": 25' % (ext, corr))
            self.ev('\n  {\n    "ph": "s", "id": %d, "pid": %d, "tid": %d, "ts": %s,\n'
                    '    "cat": "ac2g", "name": "ac2g"\n  }' % (corr, PID, TID, us(launch)))
            self.ev('\n  {\n    "ph": "f", "id": %d, "pid": 0, "tid": 7, "ts": %s,\n'
                    '    "cat": "ac2g", "name": "ac2g", "bp": "e"\n  }' % (corr, us(k_start)))
            if i % 8 == 0:
                self.ev('\n  {\n    "ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",\n'
                        '    "pid": %d, "tid": %d,\n    "ts": %s,\n    "args": {\n'
                        '      "Total Reserved": 2097152, "Total Allocated": 1048576, "Bytes": 1048576, '
                        '"Addr": 139872128385024, "Device Id": 0, "Device Type": 1\n    }\n  }'
                        % (PID, TID, us(self.t)))
            if i % 10 == 0:
                corr = self.corr
                self.corr += 1
                self.x("cuda_runtime", "cudaMemcpyAsync", PID, TID, self.t, 4000,
                       '"External id": %d,"cbid": 41, "correlation": %d' % (ext, corr))
                self.x("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 0, 7, self.t + 30000, 9000,
                       '"External id": %d,"device": 0, "context": 1, "stream": 7, "correlation": %d, '
                       '"bytes": 1048576, "memory bandwidth (GB/s)": 116.508444' % (ext, corr))
                self.x("gpu_memset", "Memset (Device)", 0, 7, self.t + 40000, 1200,
                       '"External id": %d,"device": 0, "context": 1, "stream": 7, "correlation": %d, '
                       '"bytes": 4096, "memory bandwidth (GB/s)": 3.413333' % (ext, corr))
                self.t += 5000
        self.x("user_annotation", "ProfilerStep#%d" % n, PID, TID, start, self.t - start,
               '"External id": %d,"Record function id": 0' % self.ext)
        self.ext += 1
        self.t += 1000


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mb", type=float, default=500)
    p.add_argument("-o", "--output", required=True)
    a = p.parse_args()
    random.seed(0)
    limit = int(a.mb * 1e6)
    with open(a.output, "w", buffering=1 << 22) as f:
        f.write('{\n  "schemaVersion": 1,\n  "deviceProperties": [\n    {\n      "id": 0, "name": "NVIDIA H200", '
                '"totalGlobalMem": 150110011392,\n      "computeMajor": 9, "computeMinor": 0,\n'
                '      "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,\n'
                '      "regsPerBlock": 65536, "warpSize": 32,\n      "sharedMemPerBlock": 49152, "numSms": 132\n    }\n  ],\n'
                '  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},\n'
                '  "displayTimeUnit": "ms",\n  "baseTimeNanoseconds": 1700000000000000000,\n  "traceEvents": [')
        g = Gen(f)
        g.ev('\n  {\n    "name": "process_name", "ph": "M", "ts": 0.000, "pid": %d, "tid": 0,\n'
             '    "args": {\n      "name": "python3"\n    }\n  }' % PID)
        g.ev('\n  {\n    "name": "process_name", "ph": "M", "ts": 0.000, "pid": 0, "tid": 0,\n'
             '    "args": {\n      "name": "GPU 0"\n    }\n  }')
        g.ev('\n  {\n    "name": "thread_name", "ph": "M", "ts": 0.000, "pid": %d, "tid": %d,\n'
             '    "args": {\n      "name": "thread %d (python3)"\n    }\n  }' % (PID, TID, TID))
        n = 0
        while g.written < limit:
            g.step(n)
            n += 1
        g.ev('\n  {\n    "name": "Record Window End", "ph": "i", "s": "g",\n    "pid": "", "tid": "", '
             '"ts": %s\n  }' % us(g.t))
        f.write('\n  ],\n  "traceName": "synthetic"\n}\n')


if __name__ == "__main__":
    main()
