"""`RedisTaskStore`: the task store (`_tasks._store.TaskStore`) in Redis, shared by every worker.

A server on a Redis backend (``WIREMCP_REDIS_URL``, docs/deploy.md) keeps its
tasks here unless ``task_store=`` or ``WIREMCP_TASK_STORE`` names another
store, so a ``tasks/get`` or ``tasks/update`` reaching any worker sees the
task, whichever worker runs it.

Layout (``{p}`` is the backend's prefix):

* ``{p}:task:{id}``: the record, as the JSON of `record_to_json`;
* ``{p}:tasks:owner:{owner}``: a sorted set of the owner's task ids scored
  by creation time (``tasks/list``; the owner is ``-`` without auth);
* ``{p}:tasks:expiry``: a sorted set of the ids with a TTL, scored by when
  it elapses (`list_expired`);
* ``{p}:tasks:worker:{worker}``: the set of the ids a worker runs (`renew`);
* ``{p}:tasks:live`` and ``{p}:tasks:live:owner:{owner}``: sorted sets of the
  live tasks (all; one owner's), scored by when each stops being live (its
  TTL's end or its lease's, the sooner): `create_capped` drops those past,
  counts the rest and creates, in one Lua script (the caps of `_limits`);
  `renew` moves the scores on, `finish` and `delete` remove the id;
* ``{p}:tasks:answered:{worker}``: the ids of that worker's tasks holding
  answers it has not taken: `answer` adds the id after storing the answers,
  `take_responses` removes it before taking them (so an answer stored in
  between is flagged again, never lost); `answered` is one ``SMEMBERS``,
  the worker's one look per second for all its waiting tasks (`_sweep`).

Rules:

* every transition (`set_status`, `finish`, `answer`, `take_responses`) is
  a read-modify-write under ``WATCH``/``MULTI``: when another worker changes
  the record in between, the transaction fails and is run again on the new
  record, so the first terminal transition wins across processes, as the
  interface demands; the JSON is written by Python, never re-encoded by a
  Redis script (Lua's cjson would turn an empty list into an object);
* `create` writes the record with ``SET NX``, inside the same transaction as
  its indexes: a duplicate id is a `TaskStoreError`;
* Redis unreachable or failing: `TaskStoreError` with what redis-py said
  (the server answers -32603 with it); `close` leaves the client it shares
  with a started backend open (a store used without a started backend
  opens a client of its own on the backend's URL, and closes that one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable, Callable, Literal

import orjson

from ..backends import BackendUnavailable
from ._tasks import TaskRecord, TaskStoreError
from ._tasks._memory import apply_answers, apply_ask, apply_finish, apply_status
from ._tasks._store import TERMINAL, record_from_json, record_to_json

if TYPE_CHECKING:
    import redis.asyncio

    from ..backends.redis import RedisBackend

__all__ = ["RedisTaskStore"]

#: Transactions run again at most this often when other workers keep changing the record.
_RETRIES = 50

#: `create_capped`: KEYS task, live, owner-live (or ""), owner index, expiry, worker set;
#: ARGV now, per-owner cap (-1: none), total cap, id, data, created_at, live score, expires ("": none), worker ("": none).
#: Returns {0} created, {1, live} the owner's cap, {2, live} the server's, {3} a duplicate id.
_CREATE_CAPPED = """
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[1])
if tonumber(ARGV[2]) >= 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', '(' .. ARGV[1])
  local live = redis.call('ZCARD', KEYS[3])
  if live >= tonumber(ARGV[2]) then return {1, live} end
end
local live = redis.call('ZCARD', KEYS[2])
if live >= tonumber(ARGV[3]) then return {2, live} end
if not redis.call('SET', KEYS[1], ARGV[5], 'NX') then return {3} end
redis.call('ZADD', KEYS[4], 'NX', ARGV[6], ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[7], ARGV[4])
if tonumber(ARGV[2]) >= 0 then redis.call('ZADD', KEYS[3], ARGV[7], ARGV[4]) end
if ARGV[8] ~= '' then redis.call('ZADD', KEYS[5], 'NX', ARGV[8], ARGV[4]) end
if ARGV[9] ~= '' then redis.call('SADD', KEYS[6], ARGV[4]) end
return {0}
"""


def _live_score(record: TaskRecord) -> float:
    """When the task stops being live: its TTL's end or its lease's, the sooner (inf: neither)."""
    ends = [t for t in (record.expires_at(), record.lease_until) if t is not None]
    return min(ends) if ends else float("inf")


class RedisTaskStore:
    """A `TaskStore` in Redis: ``RedisTaskStore(backend)`` shares the backend's connection."""

    def __init__(self, backend: RedisBackend) -> None:
        self.backend = backend
        self.prefix = backend.prefix
        self._own: redis.asyncio.Redis | None = None

    def _client(self) -> redis.asyncio.Redis:
        try:
            return self.backend.client
        except BackendUnavailable:
            pass
        # The backend is not started (the store is used outside a served server): a client of
        # its own, on the same URL; it connects on the first command and closes with `close`.
        if self._own is None:
            import redis.asyncio

            self._own = redis.asyncio.Redis.from_url(self.backend.url)
        return self._own

    def _key(self, task_id: str) -> str:
        return f"{self.prefix}:task:{task_id}"

    def _owner_key(self, owner: str | None) -> str:
        return f"{self.prefix}:tasks:owner:{'-' if owner is None else 'o:' + owner}"

    def _live_key(self, owner: str | None = None, *, total: bool = False) -> str:
        return f"{self.prefix}:tasks:live" if total else f"{self.prefix}:tasks:live:owner:{'-' if owner is None else 'o:' + owner}"

    async def _not_live(self, record: TaskRecord | None) -> None:
        """A task that became terminal leaves the live sets (else it leaves them when its score passes)."""
        if record is None or not record.terminal:
            return
        task_id, keys = record.task_id, (self._live_key(total=True), self._live_key(record.owner))

        async def work(client: redis.asyncio.Redis) -> None:
            async with client.pipeline(transaction=False) as pipe:
                for key in keys:
                    pipe.zrem(key, task_id)
                await pipe.execute()

        await self._call(work)

    async def _call(self, work: Callable[[redis.asyncio.Redis], Awaitable[Any]]) -> Any:
        import redis.exceptions

        try:
            return await work(self._client())
        except redis.exceptions.RedisError as exc:
            raise TaskStoreError(f"the Redis task store failed: {exc}") from None

    async def _update(self, task_id: str, change: Callable[[TaskRecord], Any]) -> tuple[TaskRecord | None, Any]:
        """Read the record, ``change`` it, write it back, atomically (WATCH/MULTI); retried on a race."""
        import redis.exceptions

        key = self._key(task_id)

        async def work(client: redis.asyncio.Redis) -> tuple[TaskRecord | None, Any]:
            for _ in range(_RETRIES):
                async with client.pipeline(transaction=True) as pipe:
                    try:
                        await pipe.watch(key)
                        raw = await pipe.get(key)
                        if raw is None:  # (leaving the block resets the pipeline: UNWATCH)
                            return None, None
                        record = record_from_json(orjson.loads(raw))
                        before = orjson.dumps(record_to_json(record))
                        outcome = change(record)
                        after = orjson.dumps(record_to_json(record))
                        if after == before:
                            return record, outcome
                        pipe.multi()  # type: ignore[no-untyped-call]  # redis-py leaves Pipeline.multi unannotated
                        pipe.set(key, after, keepttl=True)
                        await pipe.execute()
                        return record, outcome
                    except redis.exceptions.WatchError:
                        continue
            raise TaskStoreError(f"task {task_id!r}: gave up after {_RETRIES} conflicting updates from other workers")

        result: tuple[TaskRecord | None, Any] = await self._call(work)
        return result

    # -- the TaskStore interface -----------------------------------------------------------

    async def create(self, record: TaskRecord) -> None:
        data = orjson.dumps(record_to_json(record))
        expires = record.expires_at()

        async def work(client: redis.asyncio.Redis) -> bool:
            async with client.pipeline(transaction=True) as pipe:
                pipe.set(self._key(record.task_id), data, nx=True)
                pipe.zadd(self._owner_key(record.owner), {record.task_id: record.created_at}, nx=True)
                if expires is not None:
                    pipe.zadd(f"{self.prefix}:tasks:expiry", {record.task_id: expires}, nx=True)
                if record.worker is not None:
                    pipe.sadd(f"{self.prefix}:tasks:worker:{record.worker}", record.task_id)
                if not record.terminal:
                    pipe.zadd(self._live_key(total=True), {record.task_id: _live_score(record)})
                    pipe.zadd(self._live_key(record.owner), {record.task_id: _live_score(record)})
                done = await pipe.execute()
            return bool(done[0])

        if not await self._call(work):
            raise TaskStoreError(f"a task with id {record.task_id!r} already exists")

    async def create_capped(self, record: TaskRecord, *, per_owner: int | None, total: int, now: float) -> None:
        """`create` unless a cap on live tasks is reached (`_limits.TaskCapReached`): one Lua script, atomic."""
        from ._tasks._limits import TaskCapReached

        expires = record.expires_at()
        keys = [
            self._key(record.task_id), self._live_key(total=True), self._live_key(record.owner),
            self._owner_key(record.owner), f"{self.prefix}:tasks:expiry", f"{self.prefix}:tasks:worker:{record.worker}",
        ]
        args: list[Any] = [
            repr(now), -1 if per_owner is None else per_owner, total, record.task_id, orjson.dumps(record_to_json(record)),
            repr(record.created_at), repr(_live_score(record)), "" if expires is None else repr(expires), record.worker or "",
        ]
        outcome = await self._call(lambda client: client.eval(_CREATE_CAPPED, len(keys), *keys, *args))
        verdict = int(outcome[0])
        if verdict == 1:
            raise TaskCapReached("owner", int(outcome[1]), per_owner or 0)
        if verdict == 2:
            raise TaskCapReached("server", int(outcome[1]), total)
        if verdict == 3:
            raise TaskStoreError(f"a task with id {record.task_id!r} already exists")

    async def get(self, task_id: str) -> TaskRecord | None:
        raw = await self._call(lambda client: client.get(self._key(task_id)))
        return None if raw is None else record_from_json(orjson.loads(raw))

    async def set_status(
        self,
        task_id: str,
        status: Literal["working", "input_required"],
        *,
        now: float,
        message: str | None = None,
        input_requests: dict[str, Any] | None = None,
    ) -> TaskRecord | None:
        def change(record: TaskRecord) -> None:
            if record.status not in TERMINAL:
                apply_status(record, status, now, message, input_requests)

        return (await self._update(task_id, change))[0]

    async def finish(
        self,
        task_id: str,
        status: Literal["completed", "failed", "cancelled"],
        *,
        now: float,
        message: str | None = None,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
    ) -> TaskRecord | None:
        def change(record: TaskRecord) -> None:
            if record.status not in TERMINAL:
                apply_finish(record, status, now, message, result, error)

        record = (await self._update(task_id, change))[0]
        await self._not_live(record)
        return record

    async def ask(self, task_id: str, requests: dict[str, Any], *, now: float, message: str | None = None) -> TaskRecord | None:
        """Add ``requests`` to the outstanding ones and go to ``input_required``, unless terminal; in one
        WATCH/MULTI transaction, so an answer another worker stores meanwhile is never put back."""
        def change(record: TaskRecord) -> None:
            if record.status not in TERMINAL:
                apply_ask(record, requests, now, message)

        return (await self._update(task_id, change))[0]

    async def answer(self, task_id: str, responses: dict[str, Any], *, now: float) -> TaskRecord | None:
        def change(record: TaskRecord) -> None:
            if record.status not in TERMINAL:
                apply_answers(record, responses, now)

        record = (await self._update(task_id, change))[0]
        if record is not None and record.input_responses and record.worker is not None:  # flagged after: see the layout
            flag = f"{self.prefix}:tasks:answered:{record.worker}"
            await self._call(lambda client: client.sadd(flag, task_id))
        return record

    async def take_responses(self, task_id: str) -> dict[str, Any]:
        worker = await self._call(lambda client: client.get(self._key(task_id)))
        if worker is not None:  # unflagged before taking: an answer stored meanwhile flags it again
            flag = f"{self.prefix}:tasks:answered:{record_from_json(orjson.loads(worker)).worker}"
            await self._call(lambda client: client.srem(flag, task_id))

        def change(record: TaskRecord) -> dict[str, Any]:
            taken, record.input_responses = record.input_responses, {}
            return taken

        _, taken = await self._update(task_id, change)
        return dict(taken or {})

    async def renew(self, worker: str, lease_until: float) -> None:
        """Extend the lease of every live task ``worker`` runs in one transaction, whatever their number.

        ``SMEMBERS`` of the worker's set, then ``WATCH`` and ``MGET`` of all its records, then one
        ``MULTI``/``EXEC`` with the new records, their live-set scores and the removal of the terminal or
        gone ones: four round trips per heartbeat, where a transaction per task made a worker's idle CPU
        grow with the tasks it has waiting for input (bench/README.md, "Tasks"). A record another worker
        changes meanwhile fails the ``EXEC`` and the whole renewal runs again on the new records.
        """
        import redis.exceptions

        members = f"{self.prefix}:tasks:worker:{worker}"

        async def work(client: redis.asyncio.Redis) -> None:
            for _ in range(_RETRIES):
                ids = [_text(i) for i in await client.smembers(members)]
                if not ids:
                    return
                keys = [self._key(i) for i in ids]
                async with client.pipeline(transaction=True) as pipe:
                    try:
                        await pipe.watch(*keys)
                        raws = await pipe.mget(keys)
                        pipe.multi()  # type: ignore[no-untyped-call]  # redis-py leaves Pipeline.multi unannotated
                        gone = []
                        for task_id, key, raw in zip(ids, keys, raws):
                            record = None if raw is None else record_from_json(orjson.loads(raw))
                            if record is None or record.terminal:
                                gone.append(task_id)
                                continue
                            if record.worker == worker:
                                record.lease_until = lease_until
                                pipe.set(key, orjson.dumps(record_to_json(record)), keepttl=True)
                            # still live: its place in the live sets lasts as long as the new lease
                            score = {task_id: _live_score(record)}
                            pipe.zadd(self._live_key(total=True), score, xx=True)
                            pipe.zadd(self._live_key(record.owner), score, xx=True)
                        if gone:
                            pipe.srem(members, *gone)
                        await pipe.execute()
                        return
                    except redis.exceptions.WatchError:
                        continue
            raise TaskStoreError(f"worker {worker!r}: lease renewal gave up after {_RETRIES} conflicting updates")

        await self._call(work)

    async def answered(self, worker: str) -> list[str]:
        """The ids of ``worker``'s tasks holding answers it has not taken (one ``SMEMBERS`` for all its waiters)."""
        ids = await self._call(lambda client: client.smembers(f"{self.prefix}:tasks:answered:{worker}"))
        return [_text(i) for i in ids]

    async def live(self, worker: str) -> dict[str, float | None]:
        """``worker``'s non-terminal tasks: id -> when its TTL elapses (None: never)."""
        ids = [_text(i) for i in await self._call(lambda client: client.smembers(f"{self.prefix}:tasks:worker:{worker}"))]
        if not ids:
            return {}
        found = await self._call(lambda client: client.mget([self._key(i) for i in ids]))
        records = [record_from_json(orjson.loads(raw)) for raw in found if raw is not None]
        return {r.task_id: r.expires_at() for r in records if not r.terminal}

    async def list_expired(self, now: float) -> list[str]:
        ids = await self._call(lambda client: client.zrangebyscore(f"{self.prefix}:tasks:expiry", "-inf", now))
        return [_text(i) for i in ids]

    async def delete(self, task_id: str) -> None:
        record = await self.get(task_id)

        async def work(client: redis.asyncio.Redis) -> None:
            async with client.pipeline(transaction=True) as pipe:
                pipe.delete(self._key(task_id))
                pipe.zrem(f"{self.prefix}:tasks:expiry", task_id)
                pipe.zrem(self._live_key(total=True), task_id)
                if record is not None:
                    pipe.zrem(self._live_key(record.owner), task_id)
                    pipe.zrem(self._owner_key(record.owner), task_id)
                    if record.worker is not None:
                        pipe.srem(f"{self.prefix}:tasks:worker:{record.worker}", task_id)
                await pipe.execute()

        await self._call(work)

    async def list(self, owner: str | None, *, after: str | None, limit: int) -> list[TaskRecord]:
        key = self._owner_key(owner)

        async def work(client: redis.asyncio.Redis) -> list[bytes]:
            start = 0
            if after is not None:
                rank: Any = await client.zrank(key, after)
                start = 0 if rank is None else int(rank) + 1
            ids: list[Any] = list(await client.zrange(key, start, start + limit - 1))
            if not ids:
                return []
            found: list[Any] = list(await client.mget([self._key(_text(i)) for i in ids]))
            return [raw for raw in found if raw is not None]

        return [record_from_json(orjson.loads(raw)) for raw in await self._call(work)]

    async def close(self) -> None:
        """Close the client of its own, if any (the backend's closes with the server's lifespan)."""
        own, self._own = self._own, None
        if own is not None:
            await own.aclose()


def _text(value: Any) -> str:
    """A member redis-py handed back (bytes: the client does not decode)."""
    return value.decode() if isinstance(value, bytes) else str(value)
