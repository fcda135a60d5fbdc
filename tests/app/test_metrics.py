from bot.app.metrics import Metrics


def samples(metrics: Metrics) -> set[str]:
    return set(metrics.render().decode().splitlines())


def test_worker_events_are_counted() -> None:
    metrics = Metrics()
    metrics.review_finished("success", 3.2)
    metrics.review_finished("failure", 12.0)
    metrics.api_error(502)
    lines = samples(metrics)
    assert 'chart_review_reviews_total{conclusion="success"} 1.0' in lines
    assert 'chart_review_reviews_total{conclusion="failure"} 1.0' in lines
    assert "chart_review_review_duration_seconds_count 2.0" in lines
    assert 'chart_review_review_duration_seconds_bucket{le="5.0"} 1.0' in lines
    assert 'chart_review_github_api_errors_total{status="502"} 1.0' in lines


def test_queue_depth_is_read_at_scrape_time() -> None:
    depth = [3]
    metrics = Metrics()
    metrics.watch_queue(lambda: depth[0])
    assert "chart_review_queue_depth 3.0" in samples(metrics)
    depth[0] = 5
    assert "chart_review_queue_depth 5.0" in samples(metrics)


def test_broken_queue_does_not_break_the_scrape() -> None:
    def broken() -> int:
        raise OSError("disk gone")

    metrics = Metrics()
    metrics.watch_queue(broken)
    assert "chart_review_queue_depth NaN" in samples(metrics)


def test_two_instances_do_not_share_counts() -> None:
    first, second = Metrics(), Metrics()
    first.delivery("push", "queued")
    assert 'chart_review_deliveries_total{event="push",outcome="queued"} 1.0' in samples(first)
    assert not any(line.startswith("chart_review_deliveries_total{") for line in samples(second))
