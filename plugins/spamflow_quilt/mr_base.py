"""What the three quilt jobs share: plain-text records and the ``--m`` parameter."""

from mrjob.job import MRJob
from mrjob.protocol import RawProtocol, RawValueProtocol


class QuiltJob(MRJob):
    """Lines in, ``key<TAB>value`` text between tasks (JSON cost half the jobs' time)."""

    INPUT_PROTOCOL = RawValueProtocol
    INTERNAL_PROTOCOL = RawProtocol
    OUTPUT_PROTOCOL = RawProtocol

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--m", type=int, required=True, help="largest df of a patch gram")
