"""The pretrained encoder backbone."""

from conba.encoder.backbone import Backbone, BackboneConfig, BackboneError

__all__ = ["Backbone", "BackboneConfig", "BackboneError"]
