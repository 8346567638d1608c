"""Where Go's ``sort.Sort`` puts each element: the order CA's own sorts leave ties in.

Go's ``sort.Sort`` (Go 1.19 to 1.22, the pattern-defeating quicksort of ``sort/zsortinterface.go``) is
not stable, but it is deterministic: the same keys in the same order always come out the same way.
Where CA sorts with a comparison that leaves ties (the scale-down candidates: empty nodes first,
then the nodes unneeded last loop), which tie comes first is this permutation, not the input order.
A slice of up to 12 elements is insertion-sorted, which is stable; longer ones are not.

:func:`go_sort_permutation` runs the same steps on integer keys (``Less(i, j)`` is
``keys[i] < keys[j]``) and returns the input positions in sorted order.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["go_sort_permutation"]

_MASK64 = (1 << 64) - 1
_MAX_INSERTION = 12
_SHORTEST_NINTHER = 50
_MAX_SWAPS = 4 * 3
_UNKNOWN, _INCREASING, _DECREASING = 0, 1, 2


def go_sort_permutation(keys: Sequence[int]) -> list[int]:
    """The positions of ``keys`` in the order ``sort.Sort`` leaves them (``Less``: smaller key)."""
    n = len(keys)
    perm = list(range(n))
    if n <= 1:
        return perm
    k = list(keys)
    if all(k[i - 1] <= k[i] for i in range(1, n)):
        # Sorted already: insertion sort (n <= 12) moves nothing, and for longer slices the first
        # pivot choice swaps nothing (increasing hint) and the partial insertion sort finds it sorted.
        return perm
    _Sorter(k, perm).pdqsort(0, n, n.bit_length())
    return perm


class _Sorter:
    """``sort/zsortinterface.go``, step for step, on a key list and the permutation swapped with it."""

    __slots__ = ("k", "p")

    def __init__(self, keys: list[int], perm: list[int]) -> None:
        self.k = keys
        self.p = perm

    def swap(self, i: int, j: int) -> None:
        k, p = self.k, self.p
        k[i], k[j] = k[j], k[i]
        p[i], p[j] = p[j], p[i]

    def insertion_sort(self, a: int, b: int) -> None:
        k = self.k
        for i in range(a + 1, b):
            j = i
            while j > a and k[j] < k[j - 1]:
                self.swap(j, j - 1)
                j -= 1

    def sift_down(self, lo: int, hi: int, first: int) -> None:
        k = self.k
        root = lo
        while True:
            child = 2 * root + 1
            if child >= hi:
                return
            if child + 1 < hi and k[first + child] < k[first + child + 1]:
                child += 1
            if not k[first + root] < k[first + child]:
                return
            self.swap(first + root, first + child)
            root = child

    def heap_sort(self, a: int, b: int) -> None:
        first, lo, hi = a, 0, b - a
        for i in range((hi - 1) // 2, -1, -1):
            self.sift_down(i, hi, first)
        for i in range(hi - 1, -1, -1):
            self.swap(first, first + i)
            self.sift_down(lo, i, first)

    def pdqsort(self, a: int, b: int, limit: int) -> None:
        k = self.k
        was_balanced = was_partitioned = True
        while True:
            length = b - a
            if length <= _MAX_INSERTION:
                self.insertion_sort(a, b)
                return
            if limit == 0:
                self.heap_sort(a, b)
                return
            if not was_balanced:
                self.break_patterns(a, b)
                limit -= 1
            pivot, hint = self.choose_pivot(a, b)
            if hint == _DECREASING:
                self.reverse_range(a, b)
                pivot = (b - 1) - (pivot - a)
                hint = _INCREASING
            if was_balanced and was_partitioned and hint == _INCREASING and self.partial_insertion_sort(a, b):
                return
            if a > 0 and not k[a - 1] < k[pivot]:
                a = self.partition_equal(a, b, pivot)
                continue
            mid, was_partitioned = self.partition(a, b, pivot)
            left_len, right_len = mid - a, b - mid
            balance_threshold = length // 8
            if left_len < right_len:
                was_balanced = left_len >= balance_threshold
                self.pdqsort(a, mid, limit)
                a = mid + 1
            else:
                was_balanced = right_len >= balance_threshold
                self.pdqsort(mid + 1, b, limit)
                b = mid

    def partition(self, a: int, b: int, pivot: int) -> tuple[int, bool]:
        k = self.k
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while i <= j and k[i] < k[a]:
            i += 1
        while i <= j and not k[j] < k[a]:
            j -= 1
        if i > j:
            self.swap(j, a)
            return j, True
        self.swap(i, j)
        i += 1
        j -= 1
        while True:
            while i <= j and k[i] < k[a]:
                i += 1
            while i <= j and not k[j] < k[a]:
                j -= 1
            if i > j:
                break
            self.swap(i, j)
            i += 1
            j -= 1
        self.swap(j, a)
        return j, False

    def partition_equal(self, a: int, b: int, pivot: int) -> int:
        k = self.k
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while True:
            while i <= j and not k[a] < k[i]:
                i += 1
            while i <= j and k[a] < k[j]:
                j -= 1
            if i > j:
                return i
            self.swap(i, j)
            i += 1
            j -= 1

    def partial_insertion_sort(self, a: int, b: int) -> bool:
        k = self.k
        max_steps, shortest_shifting = 5, 50
        i = a + 1
        for _ in range(max_steps):
            while i < b and not k[i] < k[i - 1]:
                i += 1
            if i == b:
                return True
            if b - a < shortest_shifting:
                return False
            self.swap(i, i - 1)
            if i - a >= 2:  # shift the smaller one to the left (down to index 1, as Go's loop does)
                for j in range(i - 1, 0, -1):
                    if not k[j] < k[j - 1]:
                        break
                    self.swap(j, j - 1)
            if b - i >= 2:  # shift the greater one to the right
                for j in range(i + 1, b):
                    if not k[j] < k[j - 1]:
                        break
                    self.swap(j, j - 1)
        return False

    def break_patterns(self, a: int, b: int) -> None:
        length = b - a
        if length < 8:
            return
        random = length  # xorshift(length), a uint64
        modulus = 1 << length.bit_length()  # nextPowerOfTwo
        middle = a + (length // 4) * 2
        for idx in range(middle - 1, middle + 2):
            random ^= (random << 13) & _MASK64
            random ^= random >> 17
            random ^= (random << 5) & _MASK64
            other = random & (modulus - 1)
            if other >= length:
                other -= length
            self.swap(idx, a + other)

    def choose_pivot(self, a: int, b: int) -> tuple[int, int]:
        length = b - a
        swaps = [0]
        i = a + length // 4 * 1
        j = a + length // 4 * 2
        m = a + length // 4 * 3
        if length >= 8:
            if length >= _SHORTEST_NINTHER:
                i = self.median(i - 1, i, i + 1, swaps)
                j = self.median(j - 1, j, j + 1, swaps)
                m = self.median(m - 1, m, m + 1, swaps)
            j = self.median(i, j, m, swaps)
        if swaps[0] == 0:
            return j, _INCREASING
        if swaps[0] == _MAX_SWAPS:
            return j, _DECREASING
        return j, _UNKNOWN

    def median(self, a: int, b: int, c: int, swaps: list[int]) -> int:
        a, b = self.order2(a, b, swaps)
        b, c = self.order2(b, c, swaps)
        a, b = self.order2(a, b, swaps)
        return b

    def order2(self, a: int, b: int, swaps: list[int]) -> tuple[int, int]:
        if self.k[b] < self.k[a]:
            swaps[0] += 1
            return b, a
        return a, b

    def reverse_range(self, a: int, b: int) -> None:
        i, j = a, b - 1
        while i < j:
            self.swap(i, j)
            i += 1
            j -= 1
