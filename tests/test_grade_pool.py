"""evalsuite/run/grading.py: grades run in threads and come back on the loop, a slow one holds
only its thread, a raising one comes back with its exception, and late ones after close() are
dropped."""
import asyncio
import threading

from evalsuite.run.grading import GradePool


def test_results_come_back_on_the_loop_thread_with_errors_and_a_slow_grade_holds_one_thread():
    release = threading.Event()
    done = []

    def slow(x):
        assert release.wait(10), "the other grades did not finish while this one waited"
        return x

    def fast(x):
        if x == 3:
            raise ValueError("bad answer")
        return x * 10

    async def main():
        loop_thread = threading.get_ident()

        def on_done(job, result, error):
            assert threading.get_ident() == loop_thread
            done.append((job, result, None if error is None else str(error)))
            if len([d for d in done if d[0] != "slow"]) == 5:
                release.set()   # only once every fast grade is back does the slow one finish

        pool = GradePool(asyncio.get_running_loop(), on_done, threads=3)
        pool.submit("slow", slow, -1)
        for x in range(5):
            pool.submit(x, fast, x)
        left = await pool.wait(10)
        pool.close()
        return left

    assert asyncio.run(main()) == 0
    assert sorted(done, key=str) == sorted([(0, 0, None), (1, 10, None), (2, 20, None), (3, None, "bad answer"),
                                            (4, 40, None), ("slow", -1, None)], key=str)
    assert done[-1][0] == "slow"


def test_a_grade_finishing_after_close_is_dropped():
    release = threading.Event()
    done = []

    async def main():
        pool = GradePool(asyncio.get_running_loop(), lambda *a: done.append(a), threads=1)
        pool.submit("hung", lambda: release.wait(10))
        left = await pool.wait(0.2)
        pool.close()
        release.set()
        await asyncio.sleep(0.2)
        return left

    assert asyncio.run(main()) == 1
    assert done == []


def test_fast_grades_keep_to_one_thread():
    """More threads would only take turns under the GIL: while no grade holds its thread, one
    does them all."""
    done = []

    async def main():
        pool = GradePool(asyncio.get_running_loop(), lambda job, result, error: done.append(result), threads=6)
        for x in range(300):
            pool.submit(x, pow, x, 2)
            if x % 20 == 0:
                await asyncio.sleep(0)
        assert await pool.wait(10) == 0
        pool.close()
        return len(pool._threads)

    assert asyncio.run(main()) == 1
    assert sorted(done) == [x * x for x in range(300)]


def test_answers_arriving_apart_are_graded_in_batches_with_one_loop_wake_each():
    """A wake-up costs more CPU than a fast grade: answers a few ms apart are graded together
    after the first one's BATCH_WAIT_S, and the loop is woken once per batch, not per answer."""
    from evalsuite.run import grading

    done, drains = [], []

    async def main():
        pool = GradePool(asyncio.get_running_loop(), lambda job, result, error: done.append(result), threads=2)
        drain = pool._drain
        pool._drain = lambda: (drains.append(len(pool._finished)), drain())
        for x in range(60):
            pool.submit(x, pow, x, 2)
            await asyncio.sleep(0.002)
        assert await pool.wait(10) == 0
        pool.close()

    asyncio.run(main())
    assert sorted(done) == [x * x for x in range(60)]
    # 60 answers over >= 120 ms, batches of BATCH_WAIT_S (20 ms): a handful of wake-ups, not 60
    assert grading.BATCH_WAIT_S >= 0.01
    assert len(drains) <= 20, drains
    assert max(drains) >= 3


def test_a_long_batch_hands_back_as_it_goes():
    """Grades queued behind each other (slow-ish ones) come back every BATCH_WAIT_S or so, not
    only when the whole queue is done."""
    import time

    from evalsuite.run import grading

    back_at = []

    def slowish(x):
        time.sleep(0.01)
        return x

    async def main():
        loop = asyncio.get_running_loop()
        pool = GradePool(loop, lambda job, result, error: back_at.append(loop.time()), threads=1)
        t0 = loop.time()
        for x in range(30):   # ~0.3 s of grading in one thread
            pool.submit(x, slowish, x)
        assert await pool.wait(10) == 0
        pool.close()
        return t0

    t0 = asyncio.run(main())
    assert len(back_at) == 30
    # the first results are on the loop long before the last grade is done
    assert back_at[0] - t0 < back_at[-1] - t0 - 0.15, (back_at[0] - t0, back_at[-1] - t0)
    assert grading.BATCH_WAIT_S < 0.1


def test_a_full_batch_is_graded_without_waiting_out_the_batch_window(monkeypatch):
    """The runner holds at most 2x its request slots ungraded: once `batch_max` answers wait, the
    batch starts at once (a fast server would otherwise stall on the hold for the window)."""
    from evalsuite.run import grading

    monkeypatch.setattr(grading, "BATCH_WAIT_S", 5.0)
    done = []

    async def main():
        pool = GradePool(asyncio.get_running_loop(), lambda job, result, error: done.append(result), threads=1,
                         batch_max=4)
        pool.submit(0, pow, 0, 2)
        await asyncio.sleep(0.05)          # the thread has woken for the first and waits for more
        for x in range(1, 4):              # the fourth queued fills the batch
            pool.submit(x, pow, x, 2)
        left = await pool.wait(2.0)        # well inside the 5 s window
        pool.close()
        return left

    assert asyncio.run(main()) == 0
    assert sorted(done) == [0, 1, 4, 9]
