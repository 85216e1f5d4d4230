"""Continued pretraining of the backbone on unlabelled code: MLM, RTD (ELECTRA / CodeBERT) or both."""

from conba.pretrain.config import OBJECTIVES, PretrainConfig

__all__ = ["OBJECTIVES", "PretrainConfig", "pretrain"]


def pretrain(config: PretrainConfig, restart: bool = False, progress: bool = True, log=print):
    """Run continued pretraining; returns the output backbone folder."""
    from conba.pretrain.trainer import pretrain as run

    return run(config, restart=restart, progress=progress, log=log)
