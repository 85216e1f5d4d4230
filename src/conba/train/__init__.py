"""Contrastive training: losses, P×K sampling, feature caching and the trainer."""
