"""The labelled corpora: which wheels, where they are extracted, how the linter is run on them.

Shared by ``sample.py`` (draws the sample that was labelled) and ``score.py`` (measures it).
The projects' code is never committed: it is downloaded from PyPI and extracted under ``.work/``.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import tarfile
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"
REPO_ROOT = HERE.parent.parent


@dataclass(frozen=True)
class Corpus:
    project: str
    version: str
    # The sample was drawn from this many randomly chosen files that import torch (None: every file);
    # the machine this was built on was too busy to lint all 4.3M lines of three trees at once.
    file_sample: int | None = None
    # Published only as a source archive: its package folder is extracted from the ``.tar.gz``.
    sdist: bool = False
    # The source archive's package folder, where it is not named as the project (openai-whisper: whisper/).
    package: str | None = None

    @property
    def root(self) -> Path:
        """The folder the wheel's ``.py`` files are extracted into (paths in labels are relative to it)."""
        return WORK / f"{self.project}-{self.version}"


CORPORA = (
    Corpus("vllm", "0.33.0"),
    Corpus("sglang", "0.5.23", file_sample=400),
    Corpus("transformers", "5.24.0", file_sample=300),
    # Added for uniform25: an inference engine no rule or fix was ever shaped by.
    Corpus("lmdeploy", "0.18.0"),
    # Added for uniform26: an RL training stack (rollouts through vLLM/sglang) no rule was shaped by.
    Corpus("verl", "0.9.1"),
    # Added for uniform27: a training stack (torchtitan's trainer, MoE and float8 models), never tuned on.
    Corpus("torchtitan", "0.3.0"),
    # Added for uniform28: a vLLM fork at another version (aphrodite-engine on PyPI), never tuned on.
    Corpus("aphrodite_engine", "0.24.1", file_sample=400),
    # Added for uniform29: diffusion pipelines, schedulers and models (diffusers), never tuned on.
    Corpus("diffusers", "0.42.1", file_sample=400),
    # Added for uniform30: post-training trainers (trl), never tuned on; drawn from the session's last commit.
    Corpus("trl", "1.16.0"),
    # Added for uniform31: NVIDIA's Megatron-Core (tensor/pipeline-parallel training, MoE routing), never tuned on.
    Corpus("megatron_core", "0.16.1"),
    # Added for uniform32: FlashInfer's Python package (attention/MoE/GEMM kernel wrappers and their host-side planning), never tuned on.
    Corpus("flashinfer_python", "0.7.4", file_sample=400),
    # Added for uniform33: PyTorch's torchtune (fine-tuning recipes, models, generation), never tuned on; drawn late in session 11.
    Corpus("torchtune", "0.6.1"),
    # Added for uniform34: Unsloth (fast fine-tuning: patched models, Triton kernels, RL trainers), never tuned on;
    # drawn at the start of session 12 from its first commit.
    Corpus("unsloth", "2026.10.9"),
    # Added for uniform35: Hugging Face Accelerate (device placement, gathers, offloading, big-model
    # loading), never tuned on; drawn in session 12 after its first changes.
    Corpus("accelerate", "1.15.0"),
    # Added for uniform36: Hugging Face PEFT (LoRA and other adapters: merging, quantized layers,
    # initialisation from SVD), never tuned on; drawn at the start of session 13 from its first commit.
    Corpus("peft", "0.21.2"),
    # Added for uniform37: Liger Kernel (Triton kernels for losses, norms, RoPE and their autograd
    # wrappers, chunked/fused losses), never tuned on; drawn beside uniform36.
    Corpus("liger_kernel", "0.8.5"),
    # Added for uniform38: PyTorch's torchao (quantization and sparsity: tensor subclasses, float8
    # training, low-bit optimizers, prototype kernels), never tuned on; drawn in session 13 at 73903e9.
    Corpus("torchao", "0.18.0"),
    # Added for uniform39: PyTorch's TorchRL (environments, collectors, replay buffers, losses and
    # objectives), never tuned on; drawn beside uniform38.
    Corpus("torchrl", "0.14.1"),
    # Added for uniform40: Axolotl (fine-tuning framework: trainers, sequence packing, RL, kernels,
    # monkey patches), never tuned on; drawn late in session 13.
    Corpus("axolotl", "0.19.0"),
    # Added for uniform41: TorchMetrics (metric states, reductions and functional metrics on the
    # user's tensors), never tuned on; drawn beside uniform40.
    Corpus("torchmetrics", "1.9.0"),
    # Added for uniform42: PyTorch Lightning (trainer loop, strategies, loggers, callbacks, fabric),
    # never tuned on; drawn at the start of session 14 from its first commit.
    Corpus("lightning", "2.6.6"),
    # Added for uniform43: sentence-transformers (embedding models, losses, evaluators, cross-encoders,
    # sparse encoders), never tuned on; drawn beside uniform42.
    Corpus("sentence_transformers", "6.2.0"),
    # Added for uniform44: timm (vision model zoo: layers, models, training scripts, data loaders,
    # optimizers), never tuned on; drawn in session 14 after its first changes.
    Corpus("timm", "1.0.31"),
    # Added for uniform45: LLaMA-Factory (fine-tuning front end: data processors, trainers, model
    # patches, inference engines), never tuned on; drawn beside uniform44.
    Corpus("llamafactory", "0.9.5"),
    # Added for uniform46: vLLM's files that no earlier round labelled (fresh files only), drawn at
    # 0b23898; the corpus is the vLLM entry above.
    # Added for uniform47: OpenRLHF (RLHF training on Ray, DeepSpeed and vLLM: PPO/GRPO trainers,
    # experience makers, reward models), never tuned on; drawn in session 14.
    Corpus("openrlhf", "0.11.2"),
    # Added for uniform48: OpenCLIP (CLIP/CoCa models, contrastive losses, zero-shot evaluation,
    # training loop), never tuned on; drawn beside uniform47.
    Corpus("open_clip_torch", "3.3.0"),
    # Added for uniform49: Ultralytics YOLO (detection/segmentation/pose models, trainers, validators,
    # predictors, NMS and box utilities, exporters), never tuned on; drawn at the start of session 15.
    Corpus("ultralytics", "8.4.190"),
    # Added for uniform50: ms-swift (ModelScope's fine-tuning and RLHF stack: trainers, GRPO rollouts,
    # template encoding, model patches), never tuned on; drawn beside uniform49.
    Corpus("ms_swift", "4.6.0"),
    # Added for uniform51: PyTorch Geometric (graph layers, message passing, samplers/loaders, sparse
    # utilities, datasets), never tuned on; drawn in session 15 at 469274a.
    Corpus("torch_geometric", "2.8.1"),
    # Added for uniform52: LitGPT (GPT model zoo, generation, fine-tuning and pretraining scripts on
    # Lightning Fabric), never tuned on; drawn beside uniform51.
    Corpus("litgpt", "0.5.13"),
    # Added for uniform53: MosaicML Composer (trainer, algorithms, callbacks, loggers, metrics,
    # distributed utilities), never tuned on; drawn in session 15 at c9c7b73.
    Corpus("mosaicml", "0.32.1"),
    # Added for uniform54: Kornia (differentiable computer vision: geometry, augmentation, filters,
    # feature matching, losses), never tuned on; drawn beside uniform53.
    Corpus("kornia", "0.9.0"),
    # Added for uniform55: torchvision (detection/segmentation models, ops such as NMS and RoI
    # align, transforms v2 on tensors, datasets, reference utilities), never tuned on; drawn in
    # session 15 at 4b54408.
    Corpus("torchvision", "0.29.1"),
    # Added for uniform56: bitsandbytes (8-bit/4-bit quantized layers, optimizers and their
    # backends), never tuned on; drawn beside uniform55.
    Corpus("bitsandbytes", "0.50.2"),
    # Added for uniform57: xFormers (memory-efficient attention dispatch, sparse and fused ops,
    # their checks and benchmarks), never tuned on; drawn beside uniform55.
    Corpus("xformers", "0.0.35"),
    # Added for uniform58: XTuner (LLM fine-tuning toolkit: dataset packing, sequence parallel,
    # model wrappers, chat/eval tools), never tuned on; drawn at the start of session 16 (0f0acf4).
    Corpus("xtuner", "0.2.0"),
    # Added for uniform59: AI2's OLMo-core (training: data loaders, FSDP/TP trainers, MoE, eval),
    # never tuned on; drawn beside uniform58.
    Corpus("ai2_olmo_core", "3.0.0"),
    # Added for uniform60: LeRobot (robot learning policies, datasets, environments, processors),
    # never tuned on; drawn beside uniform58.
    Corpus("lerobot", "0.4.4"),
    # Added for uniform61: LLM Compressor (GPTQ/AWQ/SmoothQuant modifiers, calibration pipelines,
    # observers), never tuned on; drawn beside uniform58.
    Corpus("llmcompressor", "0.14.0.1"),
    # Added for uniform62: Hugging Face nanotron (3D-parallel LLM pretraining: pipeline engine,
    # tensor-parallel layers, data loaders, checkpoints), never tuned on; drawn mid-session 16.
    Corpus("nanotron", "0.4"),
    # Added for uniform63: optimum-quanto (weight/activation quantization: quantized tensors,
    # qmodules, calibration, kernels' Python dispatch), never tuned on; drawn beside uniform62.
    Corpus("optimum_quanto", "0.2.7"),
    # Added for uniform64: compressed-tensors (quantization and sparsity formats, compressors,
    # offloading utilities, transforms), never tuned on; drawn beside uniform62.
    Corpus("compressed_tensors", "0.20.1"),
    # Added for uniform65: flash-linear-attention (Triton linear-attention kernels, their Python
    # wrappers, layers and models), never tuned on; drawn beside uniform62.
    Corpus("flash_linear_attention", "0.6.0"),
    # Added for uniform66: tensordict (TensorDict containers, their device moves, memory-mapped
    # storage, nn modules over them), never tuned on; drawn beside uniform62.
    Corpus("tensordict", "0.15.3"),
    # Added for uniform67: DeepSpeed (ZeRO stages, offloading, pipeline engine, inference kernels'
    # Python side, checkpoint tools), never tuned on; drawn beside uniform62 from its source archive.
    Corpus("deepspeed", "0.19.8", sdist=True),
    # Added for uniform68: SpeechBrain (speech recognition, enhancement and speaker models, their
    # data pipelines, decoders and training Brain), never tuned on; drawn at the end of session 16.
    Corpus("speechbrain", "1.1.2"),
    # Added for uniform69: Intel AutoRound (sign-gradient weight rounding for LLM quantization,
    # calibration, export formats), never tuned on; drawn beside uniform68.
    Corpus("auto_round", "0.16.1"),
    # Added for uniform70: Unsloth Zoo (Unsloth's shared patches: compiled model rewrites, RL and
    # vLLM glue, gradient checkpointing, loss utilities), never tuned on; drawn at the start of session 17.
    Corpus("unsloth_zoo", "2026.10.9"),
    # Added for uniform71: LMCache (KV-cache offloading and sharing for vLLM/SGLang: storage backends,
    # GPU connectors, transfer channels), never tuned on; drawn beside uniform70.
    Corpus("lmcache", "0.5.6"),
    # Added for uniform72: GPTQModel (GPTQ/AWQ/QQQ quantization, packing, kernels' Python side,
    # model definitions), never tuned on; drawn beside uniform70 from its source archive.
    Corpus("gptqmodel", "7.7.0", sdist=True),
    # Added for uniform73: MONAI (medical imaging: transforms, networks, sliding-window inference,
    # metrics, engines), never tuned on; drawn beside uniform70.
    Corpus("monai", "1.6.1"),
    # Added for uniform74: TorchRec (recommendation models: sharded embedding tables, input
    # distribution, KJT/JaggedTensor containers, pipelines, metrics), never tuned on; drawn in session 17
    # after its first changes.
    Corpus("torchrec", "1.9.2"),
    # Added for uniform75: Lightning Thunder (a source-to-source compiler for PyTorch: tracing,
    # executors for nvFuser/cuDNN/Triton, distributed transforms, benchmarks), never tuned on; drawn
    # beside uniform74.
    Corpus("lightning_thunder", "0.2.6"),
    # Added for uniform76: ColossalAI (parallel training and inference: ZeRO, Gemini, booster plugins,
    # shardformer policies, MoE, inference engine), never tuned on; drawn beside uniform74 from its
    # source archive.
    Corpus("colossalai", "0.5.0", sdist=True),
    # Added for uniform77: MMEngine (OpenMMLab's training engine: runners, hooks, optimizer wrappers,
    # evaluators, visualizers, model wrappers), never tuned on; drawn beside uniform74.
    Corpus("mmengine", "0.10.7"),
    # Added for uniform78: fairseq2 (Meta's sequence-modeling library: models, generation with beam
    # search and sampling, recipes for training, data pipelines, checkpoint management), never tuned on;
    # drawn at the end of session 17.
    Corpus("fairseq2", "0.8.1"),
    # Added for uniform79: TorchFT (fault-tolerant training: process groups that survive failures,
    # managers, checkpoint transport between replicas, local SGD/DiLoCo), never tuned on; drawn beside uniform78.
    Corpus("torchft", "0.2.0"),
    # Added for uniform80: Pyro (probabilistic programming: distributions, inference (SVI, MCMC,
    # HMC/NUTS), effect handlers, contributed models), never tuned on; drawn beside uniform78.
    Corpus("pyro_ppl", "1.9.2"),
    # Added for uniform81: HQQ (half-quadratic quantization: quantizer, backends and patching of
    # HF models), never tuned on; drawn beside uniform78 from its source archive.
    Corpus("hqq", "0.2.8.post1", sdist=True),
    # Added for uniform82: FairScale (FSDP's ancestor, pipeline parallelism, optimizer state sharding,
    # activation checkpointing and offload), never tuned on; drawn at the end of session 17 from its source archive.
    Corpus("fairscale", "0.4.13", sdist=True),
    # Added for uniform83: x-transformers (a transformer library of many attention and model variants,
    # autoregressive wrappers for generation), never tuned on; drawn beside uniform82.
    Corpus("x_transformers", "2.31.10"),
    # Added for uniform84: gsplat (Gaussian splatting: rasterization wrappers, densification strategies,
    # compression, training utilities), never tuned on; drawn beside uniform82.
    Corpus("gsplat", "1.5.3"),
    # Added for uniform85: nerfacc (NeRF acceleration: occupancy grids, ray marching and volumetric
    # rendering helpers), never tuned on; drawn beside uniform82.
    Corpus("nerfacc", "0.5.3"),
    # Added for uniform86: torchaudio (audio I/O wrappers, transforms, functional DSP, models and
    # pipelines such as wav2vec2, Emformer/RNN-T decoding), never tuned on; drawn at the end of session 17.
    Corpus("torchaudio", "2.11.1"),
    # Added for uniform87: lm-evaluation-harness (model wrappers for HF, vLLM and others that batch
    # requests, score log-likelihoods and generate), never tuned on; drawn beside uniform86.
    Corpus("lm_eval", "0.4.13"),
    # Added for uniform88: vector-quantize-pytorch (VQ, residual/finite scalar quantizers, codebook
    # updates), never tuned on; drawn beside uniform86.
    Corpus("vector_quantize_pytorch", "1.32.0"),
    # Added for uniform89: mistral-inference (Mistral's reference inference: transformer, cache,
    # generation loop), never tuned on; drawn beside uniform86.
    Corpus("mistral_inference", "1.6.0"),
    # Added for uniform90: AutoAWQ (activation-aware weight quantization: calibration, scaling,
    # packing, fused inference modules), never tuned on; drawn at the start of session 18.
    Corpus("autoawq", "0.2.7.post3"),
    # Added for uniform91: NVIDIA NeMo (ASR/TTS/LLM collections: decoding, data loaders, losses),
    # never tuned on; drawn beside uniform90.
    Corpus("nemo_toolkit", "3.0.0"),
    # Added for uniform92: ESPnet (speech toolkit: ASR/TTS/enhancement models, beam search), never
    # tuned on; drawn beside uniform90.
    Corpus("espnet", "202511", file_sample=400),
    # Added for uniform93: Stable-Baselines3 (RL algorithms: rollout buffers, policies, training
    # loops), never tuned on; drawn beside uniform90.
    Corpus("stable_baselines3", "2.9.2"),
    # Added for uniform94: BoTorch (Bayesian optimization: acquisition functions, GP models,
    # optimizers, sampling), never tuned on; drawn at 60ed7ff.
    Corpus("botorch", "0.18.1"),
    # Added for uniform95: GPyTorch (Gaussian processes: kernels, lazy/linear operators, likelihoods,
    # variational strategies), never tuned on; drawn beside uniform94.
    Corpus("gpytorch", "1.15.2"),
    # Added for uniform96: e3nn (equivariant networks: irreps, tensor products, spherical harmonics),
    # never tuned on; drawn beside uniform94.
    Corpus("e3nn", "0.6.0"),
    # Added for uniform97: Tianshou (RL library: collectors, replay buffers, policies, trainers),
    # never tuned on; drawn beside uniform94.
    Corpus("tianshou", "2.0.1"),
    # Added for uniform98: Opacus (differentially private training: per-sample gradients, grad
    # samplers, privacy accountants, DP optimizers and data loaders), never tuned on; drawn at a6a5cfe.
    Corpus("opacus", "1.6.0"),
    # Added for uniform99: Captum (model interpretability: attribution methods, noise tunnels,
    # concept/influence tooling, insights), never tuned on; drawn beside uniform98.
    Corpus("captum", "0.9.0"),
    # Added for uniform100: MMDetection (detectors, heads, assigners, samplers, losses, NMS and
    # post-processing, evaluation), never tuned on; drawn beside uniform98.
    Corpus("mmdet", "3.3.0"),
    # Added for uniform101: Chronos (pretrained time-series forecasting models and pipelines),
    # never tuned on; drawn beside uniform98.
    Corpus("chronos_forecasting", "2.3.2"),
    # Added for uniform102: nnU-Net v2 (medical image segmentation: planning, preprocessing,
    # training loops, sliding-window inference), never tuned on; drawn at 44b70f1 (session 19's start).
    Corpus("nnunetv2", "2.8.1"),
    # Added for uniform103: Flair (NLP: embeddings, sequence taggers, CRF/Viterbi decoding, trainers),
    # never tuned on; drawn beside uniform102.
    Corpus("flair", "0.15.1"),
    # Added for uniform104: FunASR (speech recognition: encoders, decoders, beam search, VAD,
    # punctuation, training), never tuned on; drawn beside uniform102.
    Corpus("funasr", "1.4.16"),
    # Added for uniform105: PyKEEN (knowledge-graph embeddings: interactions, losses, negative
    # samplers, training loops, rank-based evaluation), never tuned on; drawn beside uniform102.
    Corpus("pykeen", "1.11.1"),
    # Added for uniform106: TorchGeo (geospatial datasets, samplers, transforms, Lightning trainers
    # for segmentation/detection/regression), never tuned on; drawn at 33e0199.
    Corpus("torchgeo", "0.8.1"),
    # Added for uniform107: NeuralForecast (neural time-series models, windowed training and
    # prediction through Lightning), never tuned on; drawn beside uniform106.
    Corpus("neuralforecast", "3.3.0"),
    # Added for uniform108: F5-TTS (flow-matching text-to-speech: DiT/UNet backbones, ODE sampling,
    # vocoder inference, training), never tuned on; drawn beside uniform106.
    Corpus("f5_tts", "1.1.22"),
    # Added for uniform109: PyTorch Metric Learning (miners, losses, distances, reducers, testers,
    # accuracy calculators), never tuned on; drawn beside uniform106.
    Corpus("pytorch_metric_learning", "2.9.0"),
    # Added for uniform110: pyannote.audio (speaker diarization: segmentation and embedding models,
    # pipelines, clustering, training tasks), never tuned on; drawn at 0237bc1 (the start of session 21).
    Corpus("pyannote_audio", "4.0.7"),
    # Added for uniform111: MACE (equivariant interatomic potentials: models, blocks, training
    # loops, calculators), never tuned on; drawn beside uniform110.
    Corpus("mace_torch", "0.3.16"),
    # Added for uniform112: fastai (training loop, callbacks, learners, data blocks, vision/text/
    # tabular models), never tuned on; drawn beside uniform110.
    Corpus("fastai", "2.8.12"),
    # Added for uniform113: PyTorch Forecasting (temporal fusion transformer, N-BEATS, DeepAR,
    # metrics, time-series datasets), never tuned on; drawn beside uniform110.
    Corpus("pytorch_forecasting", "1.8.0"),
    # Added for uniform114: Tokasaurus (an LLM inference engine: scheduler, model runner, sampling),
    # never tuned on; drawn after session 21's fixes.
    Corpus("tokasaurus", "0.0.4"),
    # Added for uniform115: ExLlamaV2 (quantized LLM inference: generators, samplers, caches),
    # never tuned on; drawn beside uniform114.
    Corpus("exllamav2", "0.3.2"),
    # Added for uniform116: GemLite (Triton low-bit GEMM kernels, their host-side packing and vLLM
    # backends; a source archive only), never tuned on; drawn beside uniform114.
    Corpus("gemlite", "0.6.0.post2", sdist=True),
    # Added for uniform117: DeepSpeed-MII (model serving: pipelines, batching, ragged inference),
    # never tuned on; drawn beside uniform114.
    Corpus("deepspeed_mii", "0.3.3"),
    # Added for uniform118: sbi (simulation-based inference: posterior estimators, MCMC and rejection
    # samplers, training loops), never tuned on; drawn at a1c4d17 at the start of session 22.
    Corpus("sbi", "0.27.0"),
    # Added for uniform119: skorch (a scikit-learn wrapper around PyTorch training loops, callbacks,
    # scoring), never tuned on; drawn beside uniform118.
    Corpus("skorch", "1.4.0"),
    # Added for uniform120: TorchANI (neural network potentials: AEV computation, neighbour lists,
    # ensembles), never tuned on; drawn beside uniform118.
    Corpus("torchani", "2.9.0"),
    # Added for uniform121: OpenAI Whisper (speech recognition: the decoding loop, beam search, timing
    # alignment; a source archive only), never tuned on; drawn beside uniform118.
    Corpus("openai_whisper", "20250625", sdist=True, package="whisper"),
    # Added for uniform122: MegaBlocks (dropless MoE: routing, token permutation, histograms and
    # grouped GEMMs; a source archive only), never tuned on; drawn in session 22.
    Corpus("megablocks", "0.10.0", sdist=True),
    # Added for uniform123: mamba-ssm (selective state-space models: scans, generation with
    # inference caches; a source archive only), never tuned on; drawn beside uniform122.
    Corpus("mamba_ssm", "2.3.2.post1", sdist=True),
    # Added for uniform124: Transformer Engine's Python package (FP8 recipes, amax histories,
    # fused layers, userbuffers; its PyTorch and JAX frontends), never tuned on; drawn beside uniform122.
    Corpus("transformer_engine", "2.20.2"),
    # Added for uniform125: k-diffusion (Karras et al. samplers, sigma schedules, training
    # utilities), never tuned on; drawn beside uniform122.
    Corpus("k_diffusion", "0.1.1.post1"),
    # Added for uniform126: torchdiffeq (ODE solvers: adaptive step control, event handling, adjoint
    # backpropagation), never tuned on; drawn at the end of session 22 from its last code commit.
    Corpus("torchdiffeq", "0.2.5"),
    # Added for uniform127: Segment Anything (image encoder, prompt encoder, automatic mask
    # generation with its box and mask post-processing), never tuned on; drawn beside uniform126.
    Corpus("segment_anything", "1.0"),
    # Added for uniform128: Hugging Face Optimum (export to ONNX, graph transformations, BetterTransformer-era
    # utilities), never tuned on; drawn beside uniform126.
    Corpus("optimum", "2.3.0"),
    # Added for uniform129: XGrammar (structured generation for LLM engines: token bitmasks applied
    # to logits, grammar matchers), never tuned on; drawn beside uniform126.
    Corpus("xgrammar", "0.2.9"),
    # Added for uniform130: Darts (time-series forecasting: torch models behind a fit/predict API,
    # likelihoods, datasets of windows), never tuned on; drawn at the start of session 23 from its first commit.
    Corpus("darts", "0.48.1"),
    # Added for uniform131: AudioCraft (MusicGen/AudioGen: EnCodec compression, codebook language
    # models, sampling loops), a source archive, never tuned on; drawn beside uniform130.
    Corpus("audiocraft", "1.3.0", sdist=True),
    # Added for uniform132: NeuralOperator (Fourier and spectral neural operators, their training
    # loops and losses), never tuned on; drawn beside uniform130.
    Corpus("neuraloperator", "2.0.0"),
    # Added for uniform133: Demucs (music source separation: chunked inference, overlap-add,
    # the separation API), never tuned on; drawn beside uniform130.
    Corpus("demucs", "4.1.0"),
    # Added for uniform134: Boltz (biomolecular structure prediction: trunk, diffusion sampling,
    # featurizers and confidence heads), never tuned on; drawn in session 23 after its changes.
    Corpus("boltz", "2.2.1"),
    # Added for uniform135: nerfstudio (neural radiance fields: ray samplers, field models, the
    # viewer and its exporters), never tuned on; drawn beside uniform134.
    Corpus("nerfstudio", "1.1.5"),
    # Added for uniform136: Lightly (self-supervised learning: losses, memory banks, transforms,
    # embedding and active-learning utilities), never tuned on; drawn beside uniform134.
    Corpus("lightly", "1.6.0"),
    # Added for uniform137: fair-esm (protein language models and ESMFold's structure module),
    # never tuned on; drawn beside uniform134.
    Corpus("fair_esm", "2.0.0"),
    # Added for uniform138: Brevitas (quantization-aware training: quantizers, proxies, graph
    # equalization and export), never tuned on; drawn at the start of session 24.
    Corpus("brevitas", "0.13.4"),
    # Added for uniform139: GLiNER (span and token NER models, decoding, training), never tuned on;
    # drawn beside uniform138.
    Corpus("gliner", "0.2.29"),
    # Added for uniform140: spandrel (loading and running image restoration architectures), never
    # tuned on; drawn beside uniform138.
    Corpus("spandrel", "0.4.2"),
    # Added for uniform141: segmentation_models_pytorch (encoders, decoders, losses and metrics),
    # never tuned on; drawn beside uniform138.
    Corpus("segmentation_models_pytorch", "0.6.0"),
    # Added for uniform142: FairChem (UMA and eSEN interatomic potentials, graph building, OCP
    # trainers and calculators), never tuned on; drawn in session 24 after its first change.
    Corpus("fairchem_core", "2.24.0"),
    # Added for uniform143: Coqui TTS (text-to-speech and vocoder models, trainers, the
    # synthesizer), never tuned on; drawn beside uniform142.
    Corpus("coqui_tts", "0.28.0"),
    # Added for uniform144: RF-DETR (real-time detection transformers: backbone, matcher,
    # post-processing, training loop), never tuned on; drawn beside uniform142.
    Corpus("rfdetr", "1.11.2"),
    # Added for uniform145: pytorch_optimizer (a hundred optimizers, schedulers and losses),
    # never tuned on; drawn beside uniform142.
    Corpus("pytorch_optimizer", "4.1.0"),
    # Added for uniform146: DiffSynth-Studio (diffusion and video pipelines, model loaders, VRAM
    # management and LoRA), never tuned on; drawn in session 24 after its second change.
    Corpus("diffsynth", "2.1.12"),
    # Added for uniform147: MMPretrain (backbones, heads, retrievers, losses and evaluation metrics
    # on MMEngine), never tuned on; drawn beside uniform146.
    Corpus("mmpretrain", "1.2.0"),
    # Added for uniform148: Stanza (NLP pipelines: taggers, parsers, NER, tokenizers and their
    # trainers), never tuned on; drawn beside uniform146.
    Corpus("stanza", "1.15.0"),
    # Added for uniform149: SchNetPack (atomistic neural networks: representations, neighbor lists,
    # MD integrators), never tuned on; drawn beside uniform146.
    Corpus("schnetpack", "2.1.1"),
    # Added for uniform150: MMagic (image and video editing, super-resolution, diffusion and GAN
    # models on MMEngine), never tuned on; drawn in session 25 at its start.
    Corpus("mmagic", "1.2.0"),
    # Added for uniform151: SuperGradients (detection, segmentation and pose training recipes,
    # losses, metrics and post-processing), never tuned on; drawn beside uniform150.
    Corpus("super_gradients", "3.7.1"),
    # Added for uniform152: TabPFN (a tabular foundation model: preprocessing, inference engine,
    # ensembling), never tuned on; drawn beside uniform150.
    Corpus("tabpfn", "9.2.0"),
    # Added for uniform153: MMSegmentation (segmentors, decode heads, losses and metrics on
    # MMEngine), never tuned on; drawn beside uniform150.
    Corpus("mmsegmentation", "1.2.2"),
    # Added for uniform154: MMPose (pose estimators, heads, codecs and keypoint metrics on
    # MMEngine), never tuned on; drawn in session 25 after its first changes.
    Corpus("mmpose", "1.3.2"),
    # Added for uniform155: MMAction2 (video recognition and localization models, heads, metrics),
    # never tuned on; drawn beside uniform154.
    Corpus("mmaction2", "1.2.0"),
    # Added for uniform156: pytorch-widedeep (wide and deep tabular, text and image models, their
    # trainers, callbacks and losses), never tuned on; drawn beside uniform154.
    Corpus("pytorch_widedeep", "1.7.0"),
    # Added for uniform157: MMOCR (text detection, recognition and key information extraction on
    # MMEngine), never tuned on; drawn beside uniform154.
    Corpus("mmocr", "1.0.1"),
    # Added for uniform158: GluonTS (probabilistic time-series models, distributions and
    # Lightning modules in its torch half), never tuned on; drawn beside uniform154.
    Corpus("gluonts", "0.17.0"),
    # Added for uniform159: NNCF (compression: quantization, pruning and sparsity algorithms for
    # torch models), never tuned on; drawn beside uniform154.
    Corpus("nncf", "3.4.0"),
    # Added for uniform160: CHGNet (a crystal graph neural network potential: graphs, trainer,
    # MD), never tuned on; drawn beside uniform154.
    Corpus("chgnet", "0.4.2"),
    # Added for uniform161: d3rlpy (offline reinforcement learning algorithms, replay buffers and
    # evaluators), never tuned on; drawn beside uniform154.
    Corpus("d3rlpy", "2.8.1"),
    # Added for uniform162: pykan (Kolmogorov-Arnold networks: spline layers, pruning, symbolic
    # fitting), never tuned on; drawn beside uniform154.
    Corpus("pykan", "0.2.8"),
    # Added for uniform163: TorchMD-Net (equivariant neural network potentials, their datasets and
    # Lightning module), never tuned on; drawn beside uniform154.
    Corpus("torchmd_net", "2.4.10"),
    # Added for uniform164: PyTorch Tabular (tabular models on Lightning, their heads, losses and
    # tuner), never tuned on; drawn beside uniform154.
    Corpus("pytorch_tabular", "1.2.0"),
    # Added for uniform165: Torch-Pruning (dependency graphs and structured pruning of torch
    # models), never tuned on; drawn beside uniform154.
    Corpus("torch_pruning", "1.6.1"),
    # Added for uniform166: BasicSR (image restoration: SR/denoise models, losses, metrics and
    # their training loop; a source archive), never tuned on; drawn at the start of session 26.
    Corpus("basicsr", "1.4.2", sdist=True),
    # Added for uniform167: Asteroid (audio source separation: masking networks, PIT losses,
    # filterbanks), never tuned on; drawn beside uniform166.
    Corpus("asteroid", "0.7.0"),
    # Added for uniform168: mergekit (model merging: tensor-wise merge methods, lazy loaders,
    # MoE assembly), never tuned on; drawn beside uniform166.
    Corpus("mergekit", "0.1.5"),
    # Added for uniform169: SAM 2 (segment anything in images and videos: memory attention,
    # predictors, automatic mask generation; a source archive), never tuned on; drawn beside uniform166.
    Corpus("sam2", "1.1.0", sdist=True),
    # Added for uniform170: PyTorch-Ignite (training engines, handlers, metrics and distributed
    # helpers), never tuned on; drawn in session 26 after its first change.
    Corpus("pytorch_ignite", "0.5.5"),
    # Added for uniform171: NequIP (E(3)-equivariant interatomic potentials: models, data
    # pipelines, Lightning training), never tuned on; drawn beside uniform170.
    Corpus("nequip", "0.19.1"),
    # Added for uniform172: stable-audio-tools (audio diffusion and autoencoder models, their
    # training wrappers and inference), never tuned on; drawn beside uniform170.
    Corpus("stable_audio_tools", "0.0.19"),
    # Added for uniform173: Uni2TS (Moirai time-series foundation models: modules, losses,
    # data transforms), never tuned on; drawn beside uniform170.
    Corpus("uni2ts", "2.0.0"),
    # Added for uniform174: Avalanche (continual-learning strategies, benchmarks, replay buffers,
    # evaluation plugins), never tuned on; drawn from session 27's start commit.
    Corpus("avalanche_lib", "0.6.0"),
    # Added for uniform175: rl_games (PPO/SAC agents, vectorised environments, players), never
    # tuned on; drawn beside uniform174.
    Corpus("rl_games", "1.6.5"),
    # Added for uniform176: TimesFM (Google's time-series foundation model: torch and flax
    # backends, forecasting wrappers), never tuned on; drawn beside uniform174.
    Corpus("timesfm", "3.0.2"),
    # Added for uniform177: TorchQuantum (quantum-circuit simulation on tensors: gates, devices,
    # encoders, measurements), never tuned on; drawn beside uniform174.
    Corpus("torchquantum", "0.1.8"),
    # Added for uniform178: Sample Factory (asynchronous PPO: learners, rollout workers, shared
    # tensor buffers), never tuned on; drawn from session 28's start commit.
    Corpus("sample_factory", "2.1.1"),
    # Added for uniform179: HeavyBall (compiled optimizers: Shampoo/SOAP/PSGD preconditioners and
    # their utilities), never tuned on; drawn beside uniform178.
    Corpus("heavyball", "3.2.1"),
    # Added for uniform180: Orb (interatomic-potential models: graph featurisation, forcefield
    # heads, ASE calculator), never tuned on; drawn beside uniform178.
    Corpus("orb_models", "0.5.5"),
    # Added for uniform181: SevenNet (equivariant interatomic potentials: graph building, training,
    # ASE calculator), never tuned on; drawn beside uniform178.
    Corpus("sevenn", "0.13.0"),
    # Added for uniform182: MatterSim (Microsoft's interatomic-potential models: M3GNet/Graphormer
    # graphs, ASE calculator, fine-tuning), never tuned on; drawn from session 29's start commit.
    Corpus("mattersim", "1.2.3"),
    # Added for uniform183: denoising-diffusion-pytorch (Gaussian, elucidated and 1-D diffusion
    # models, their trainers and samplers), never tuned on; drawn beside uniform182.
    Corpus("denoising_diffusion_pytorch", "2.3.4"),
    # Added for uniform184: TabNet (attentive tabular networks: sparsemax, pretraining, sklearn-style
    # fit/predict loops), never tuned on; drawn beside uniform182.
    Corpus("pytorch_tabnet", "4.1.0"),
    # Added for uniform185: torchsde (stochastic differential equation solvers: Brownian trees,
    # adjoint methods, SDE integrators), never tuned on; drawn beside uniform182.
    Corpus("torchsde", "0.2.6"),
    # Added for uniform186: OpenNMT-py (sequence-to-sequence translation: encoders, decoders, beam
    # search, training loop, inference engines), never tuned on; drawn beside uniform182.
    Corpus("OpenNMT_py", "3.5.1"),
    # Added for uniform187: AllenNLP (NLP research library: models, token embedders, metrics,
    # trainer, predictors), never tuned on; drawn beside uniform182.
    Corpus("allennlp", "2.10.1"),
    # Added for uniform188: learn2learn (meta-learning: MAML/MetaSGD wrappers, task datasets,
    # few-shot benchmarks), never tuned on; drawn from session 29's commit 42928b5, after its changes.
    Corpus("learn2learn", "0.2.0", sdist=True),
    # Added for uniform189: normflows (normalizing flows: flow layers, base distributions, MCMC
    # samplers), never tuned on; drawn beside uniform188.
    Corpus("normflows", "1.7.3", sdist=True),
    # Added for uniform190: Parler-TTS (text-to-speech: a decoder over DAC audio codes, generation,
    # streaming), never tuned on; drawn beside uniform188.
    Corpus("parler_tts", "0.2.3", sdist=True),
    # Added for uniform191: RecBole (recommender systems: general, sequential and knowledge-aware
    # models, trainers, evaluators), never tuned on; drawn beside uniform188.
    Corpus("recbole", "1.2.1"),
    # Added for uniform192: TransformerLens (mechanistic interpretability: hooked transformers,
    # activation caches, weight loading, evals), never tuned on; drawn from session 30's start
    # commit 6929f75, before its changes.
    Corpus("transformer_lens", "4.3.0"),
    # Added for uniform193: skrl (reinforcement learning: PPO/SAC/TD3 agents, memories, trainers,
    # multi-agent), never tuned on; drawn beside uniform192.
    Corpus("skrl", "2.1.1"),
    # Added for uniform194: zuko (normalizing flows: autoregressive and coupling transforms,
    # distributions), never tuned on; drawn beside uniform192.
    Corpus("zuko", "1.6.0"),
    # Added for uniform195: Kokoro (text-to-speech: ISTFTNet decoder, pipeline over phoneme
    # chunks), never tuned on; drawn beside uniform192.
    Corpus("kokoro", "0.9.4"),
    # Added for uniform196: DeepXDE (physics-informed networks: PDE data, models, training with
    # several backends), never tuned on; drawn beside uniform192.
    Corpus("deepxde", "1.15.0"),
    # Added for uniform197: WhisperX (speech recognition: batched Whisper, alignment, diarization),
    # never tuned on; drawn beside uniform192.
    Corpus("whisperx", "3.8.6"),
    # Added for uniform198: scvi-tools (single-cell omics: variational autoencoders, training
    # plans, data managers), never tuned on; drawn after session 30's changes.
    Corpus("scvi_tools", "1.4.2"),
    # Added for uniform199: Cellpose (cell segmentation: U-Net style networks, flow dynamics,
    # training), never tuned on; drawn beside uniform198.
    Corpus("cellpose", "4.2.1.1"),
    # Added for uniform200: SAELens (sparse autoencoders on model activations: training, caches,
    # evaluation), never tuned on; drawn beside uniform198.
    Corpus("sae_lens", "6.54.12"),
    # Added for uniform201: Chai-1 (biomolecular structure prediction: feature pipeline, tokenizer,
    # diffusion sampling, ranking), never tuned on; drawn from session 31's start commit 62bef78,
    # before its changes.
    Corpus("chai_lab", "0.6.1"),
    # Added for uniform202: DGL (graph neural networks: graphs, sampling, message passing,
    # GraphBolt), never tuned on; drawn beside uniform201.
    Corpus("dgl", "2.1.0"),
    # Added for uniform203: tsai (time-series models on fastai: InceptionTime, TST, data
    # pipelines, callbacks), never tuned on; drawn beside uniform201.
    Corpus("tsai", "1.0.1"),
    # Added for uniform204: piq (image quality metrics: SSIM, LPIPS, FID, BRISQUE), never tuned
    # on; drawn beside uniform201.
    Corpus("piq", "0.8.0"),
    # Added for uniform205: torchdyn (neural differential equations: solvers, adjoints, models),
    # never tuned on; drawn beside uniform201.
    Corpus("torchdyn", "1.0.6"),
    # Added for uniform206: AudioLM-pytorch (audio language models: SoundStream, semantic and
    # acoustic transformers, trainers), never tuned on; drawn beside uniform201.
    Corpus("audiolm_pytorch", "2.4.0"),
    # Added for uniform207: TorchIO (medical image augmentation and patch sampling: transforms,
    # samplers, queues), never tuned on; drawn beside uniform201.
    Corpus("torchio", "1.2.1"),
    # Added for uniform208: YOLOv5 (object detection: models, training loop, loss, NMS, metrics),
    # never tuned on; drawn after session 31's change (1fb598f).
    Corpus("yolov5", "7.0.14"),
    # Added for uniform209: Catalyst (training framework: runners, callbacks, metrics, engines),
    # never tuned on; drawn beside uniform208.
    Corpus("catalyst", "22.4"),
    # Added for uniform210: ALIGNN (crystal graph networks on DGL: line graphs, training,
    # force fields), never tuned on; drawn beside uniform208.
    Corpus("alignn", "2026.8.11"),
    # Added for uniform211: MatGL (materials graph models: M3GNet, MEGNet, CHGNet on DGL,
    # potentials and dynamics), never tuned on; drawn beside uniform208.
    Corpus("matgl", "4.1.2"),
    # Added for uniform212: DGL-LifeSci (molecular graph models: featurizers, GNN predictors,
    # generative models), never tuned on; drawn beside uniform208.
    Corpus("dgllife", "0.3.2"),
    # Added for uniform213: LAVIS (vision-language models: BLIP, BLIP-2, ALBEF, runners and
    # tasks), never tuned on; drawn beside uniform208.
    Corpus("salesforce_lavis", "1.0.2"),
    # Added for uniform214: Poutyne (a Keras-like training loop: models, callbacks, metrics),
    # never tuned on; drawn beside uniform208.
    Corpus("poutyne", "1.19.0"),
    # Added for uniform215: AutoGluon multimodal (AutoML over timm, Hugging Face and CLIP backbones:
    # data processors, Lightning modules, matchers, predictors), never tuned on; drawn from
    # session 32's start commit 447e750.
    Corpus("autogluon_multimodal", "1.6.3"),
    # Added for uniform216: PyPOTS (time-series imputation, forecasting and classification with
    # missing values: SAITS, BRITS, TimesNet and ~50 more), never tuned on; drawn beside uniform215.
    Corpus("pypots", "1.5"),
    # Added for uniform217: DeepChem (molecular machine learning: featurizers, PyTorch models,
    # trainers beside TensorFlow ones), never tuned on; drawn beside uniform215.
    Corpus("deepchem", "2.8.0"),
    # Added for uniform218: Petals (serving and fine-tuning large models over a swarm: remote
    # blocks, servers, client-side sampling), never tuned on; drawn beside uniform215.
    Corpus("petals", "2.2.0.post1"),
    # Added for uniform219: Adapters (parameter-efficient adapters on transformers models: LoRA,
    # prefix tuning, heads, composition), never tuned on; drawn beside uniform215.
    Corpus("adapters", "1.3.0"),
    # Added for uniform220: AlphaFold3-pytorch (structure prediction: input pipeline, pairformer,
    # diffusion module, confidence heads, trainer), never tuned on; drawn beside uniform215.
    Corpus("alphafold3_pytorch", "0.8.3"),
    # Added for uniform221: torch-fidelity (generative-model metrics: FID, KID, ISC, PPL on
    # feature extractors), never tuned on; drawn beside uniform215.
    Corpus("torch_fidelity", "0.4.0"),
    # Added for uniform222: SetFit (few-shot sentence-transformer classifiers: trainers, heads,
    # sampling), never tuned on; drawn after session 32's changes (5614276).
    Corpus("setfit", "1.2.0"),
    # Added for uniform223: EfficientDet (effdet: BiFPN detectors, anchors, NMS, evaluators),
    # never tuned on; drawn beside uniform222.
    Corpus("effdet", "0.4.1"),
    # Added for uniform224: Imagen-pytorch (cascaded text-to-image diffusion: Unets, trainer,
    # samplers), never tuned on; drawn beside uniform222.
    Corpus("imagen_pytorch", "2.1.0"),
    # Added for uniform225: Real-ESRGAN (image super-resolution: models, tiled inference,
    # degradations), never tuned on; drawn beside uniform222.
    Corpus("realesrgan", "0.3.0"),
    # Added for uniform226: pytorch-grad-cam (class activation maps: Grad-CAM and ~15 variants,
    # metrics, ablation), never tuned on; drawn from session 33's start commit bbc570d.
    Corpus("grad_cam", "1.5.7", sdist=True, package="pytorch_grad_cam"),
    # Added for uniform227: BERTScore (text similarity from contextual embeddings: scorer,
    # idf weighting, baselines), never tuned on; drawn beside uniform226.
    Corpus("bert_score", "0.3.13"),
    # Added for uniform228: hivemind (decentralized training: averagers, mixture-of-experts over a
    # DHT, compression, optimizers), never tuned on; drawn beside uniform226.
    Corpus("hivemind", "1.1.12"),
    # Added for uniform229: PyTorchVideo (video models, transforms, datasets and losses),
    # never tuned on; drawn beside uniform226.
    Corpus("pytorchvideo", "0.1.5", sdist=True),
    # Added for uniform230: FastChat (chatbot serving and training: model workers, generation
    # loops, compression, evaluation), never tuned on; drawn beside uniform226.
    Corpus("fschat", "0.2.36"),
    # Added for uniform231: RWKV (the RWKV language model's inference package: model, sampling,
    # tokenizer), never tuned on; drawn beside uniform226.
    Corpus("rwkv", "0.8.32"),
    # Added for uniform232: Lightning Bolts (Lightning models, callbacks, losses and datamodules),
    # never tuned on; drawn beside uniform226.
    Corpus("lightning_bolts", "0.7.0"),
    # Added for uniform233: EnCodec (Meta's neural audio codec: SEANet, residual vector quantizer,
    # compression), never tuned on; drawn after session 33's changes.
    Corpus("encodec", "0.1.1", sdist=True),
    # Added for uniform234: Vocos (a Fourier-based vocoder: backbones, heads, feature extractors),
    # never tuned on; drawn beside uniform233.
    Corpus("vocos", "0.1.0"),
    # Added for uniform235: Descript Audio Codec (an improved RVQGAN codec: model, training nets,
    # compression utilities), never tuned on; drawn beside uniform233.
    Corpus("descript_audio_codec", "1.0.0", package="dac"),
    # Added for uniform236: Open-Unmix (music source separation: models, filtering, inference),
    # never tuned on; drawn beside uniform233.
    Corpus("openunmix", "1.3.0"),
    # Added for uniform237: DALLE2-pytorch (unCLIP: diffusion prior, decoder, trainers),
    # never tuned on; drawn beside uniform233.
    Corpus("dalle2_pytorch", "1.15.6"),
    # Added for uniform238: GFPGAN (blind face restoration on BasicSR: models, architectures,
    # restorer), never tuned on; drawn beside uniform233.
    Corpus("gfpgan", "1.3.8"),
    # Added for uniform239: facexlib (face detection, parsing, alignment and matting helpers),
    # never tuned on; drawn beside uniform233.
    Corpus("facexlib", "0.3.0"),
)


FILE_SAMPLE_SEED = 7


def sampled_files(corpus: Corpus) -> list[Path]:
    """The files the sample was drawn from (fixed seed), as absolute paths."""
    root = ensure_extracted(corpus)
    files = sorted(root.rglob("*.py"))
    if corpus.file_sample is None:
        return files
    with_torch = [p for p in files if "import torch" in p.read_text(errors="replace")]
    return sorted(random.Random(FILE_SAMPLE_SEED).sample(with_torch, min(corpus.file_sample, len(with_torch))))


def fresh_files(corpus: Corpus, labelled: set[str], round_name: str) -> list[Path]:
    """Files nobody has labelled a line of: a held-out round drawn here also tests files no fix looked at.

    Drawn (seeded by the round) from the torch-importing files outside the first sample, as many as that
    sample had (every such file for a project linted whole). A draw depends on the labels of its day:
    ``uniform9`` was drawn with the seed ``FILE_SAMPLE_SEED + 1``.
    """
    first = set(sampled_files(corpus))
    root = corpus.root
    rest = [p for p in sorted(root.rglob("*.py"))
            if p not in first and p.relative_to(root).as_posix() not in labelled
            and "import torch" in p.read_text(errors="replace")]
    if corpus.file_sample is None:
        return [p for p in sampled_files(corpus) if p.relative_to(root).as_posix() not in labelled]
    seed = FILE_SAMPLE_SEED + 1 if round_name == "uniform9" else f"{FILE_SAMPLE_SEED}-{round_name}"
    return sorted(random.Random(seed).sample(rest, min(corpus.file_sample, len(rest))))


def ensure_extracted(corpus: Corpus) -> Path:
    """Download the wheel (``pip download --no-deps``) and extract its ``.py`` files, once."""
    if corpus.root.is_dir() and any(corpus.root.iterdir()):
        return corpus.root
    wheels = WORK / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    if corpus.sdist:
        return _extract_sdist(corpus, wheels)
    found = sorted(wheels.glob(f"{corpus.project}-{corpus.version}-*.whl"))
    if not found:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
             f"{corpus.project}=={corpus.version}", "-d", str(wheels)],
            check=True,
        )
        found = sorted(wheels.glob(f"{corpus.project}-{corpus.version}-*.whl"))
    with zipfile.ZipFile(found[0]) as wheel:
        for member in wheel.namelist():
            if member.endswith(".py"):
                wheel.extract(member, corpus.root)
    return corpus.root


def _extract_sdist(corpus: Corpus, wheels: Path) -> Path:
    """A project published only as a source archive (DeepSpeed): its package's ``.py`` files, with
    the archive's top folder (``deepspeed-0.19.8/``) stripped so paths read as in a wheel."""
    archive = wheels / f"{corpus.project}-{corpus.version}.tar.gz"
    if not archive.exists():
        _download_sdist(corpus, archive)
    with tarfile.open(archive) as sdist:
        for member in sdist.getmembers():
            parts = member.name.split("/", 1)
            if member.isfile() and member.name.endswith(".py") and len(parts) == 2 and parts[1].startswith((corpus.package or corpus.project) + "/"):
                member.name = parts[1]
                sdist.extract(member, corpus.root, filter="data")
    return corpus.root


def _download_sdist(corpus: Corpus, archive: Path) -> None:
    """Fetch the archive from PyPI's simple index. ``pip download --no-binary`` would build its
    metadata, which fails for packages whose ``setup.py`` imports torch (mamba-ssm, SAM 2)."""
    index = f"https://pypi.org/simple/{re.sub(r'[-_.]+', '-', corpus.project).lower()}/"
    with urllib.request.urlopen(index, timeout=60) as page:
        links = re.findall(r'href="([^"#]+)', page.read().decode())
    stem = re.sub(r"[-_.]+", "[-_.]", corpus.project)  # names hold only letters, digits and -_.
    wanted = re.compile(rf"/{stem}-{re.escape(corpus.version)}\.tar\.gz$", re.IGNORECASE)
    found = [link for link in links if wanted.search(link)]
    if not found:
        raise SystemExit(f"no source archive of {corpus.project} {corpus.version} on PyPI")
    with urllib.request.urlopen(found[0], timeout=300) as response:
        archive.write_bytes(response.read())


def run_linter(paths: list[Path], cwd: Path, extra: list[str]) -> list[dict[str, Any]]:
    """Run this checkout's linter (``python -m syncllint``) and return its JSON findings.

    ``--isolated``: no configuration file of the host checkout applies; ``--no-respect-gitignore``:
    ``.work/`` is gitignored here but must be linted; ``--no-cache``: a cache written into a
    project's tree would show its findings to the reviewers who label it blind.
    """
    if not paths:
        return []
    command = [
        sys.executable, "-m", "syncllint", "check", *[str(p) for p in paths],
        "--isolated", "--no-respect-gitignore", "--no-cache", "--output-format", "json", "-q", "--exit-zero",
        *extra,
    ]
    env_path = str(REPO_ROOT)
    done = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, check=False,
        env={**__import__("os").environ, "PYTHONPATH": env_path},
    )
    unknown = re.search(r"unknown rule selector `([A-Z0-9]+)`", done.stderr)
    if done.returncode == 2 and unknown and "--extend-select" in extra:
        # A rule family this checkout does not have yet (e.g. SYNC7 before the explicit waits land).
        at = extra.index("--extend-select")
        if extra[at + 1] == unknown.group(1):
            print(f"note: this checkout has no {unknown.group(1)} rules; linting without them", file=sys.stderr)
            return run_linter(paths, cwd, extra[:at] + extra[at + 2:])
    if done.returncode != 0:
        raise SystemExit(f"syncllint failed ({done.returncode}):\n{done.stderr[-4000:]}")
    findings: list[dict[str, Any]] = json.loads(done.stdout or "[]")
    return findings


def relative_file(corpus: Corpus, filename: str) -> str:
    return Path(filename).resolve().relative_to(corpus.root.resolve()).as_posix()
