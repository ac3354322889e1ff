"""Unit tests for Raupi: python3 -m unittest discover -s apps/raupi (needs the vendored packages on PYTHONPATH)."""
import unittest

import server


class RaupiTest(unittest.TestCase):
    def setUp(self):
        self.client = server.create_app().test_client()

    def test_answer_is_the_44_character_sentence(self):
        res = self.client.get("/?n=1000")
        self.assertEqual(res.status_code, 200)
        self.assertTrue(res.content_type.startswith("text/plain"))
        body = res.get_data(as_text=True)
        self.assertEqual(len(body), 44)
        self.assertRegex(body, r"^The result of this run is :  \d+\.\d+")
        # 1000 products of two uniforms average 0.25 each, so the sum is near 250
        value = float(body[len(server.PREFIX):])
        self.assertTrue(150 < value < 350, value)

    def test_missing_n_is_the_study_default(self):
        self.assertEqual(server.iterations([]), 200)
        self.assertEqual(server.iterations([""]), 200)
        self.assertEqual(server.iterations(["12"]), 12)
        self.assertEqual(server.work(0), "The result of this run is :  0")

    def test_bad_n_is_a_400_naming_the_parameter(self):
        for q in ["n=abc", "n=-5", "n=1.5", "n=%d" % (server.MAX_N + 1), "n=1&n=2"]:
            res = self.client.get("/?" + q)
            self.assertEqual(res.status_code, 400, q)
            self.assertRegex(res.get_data(as_text=True), r"^raupi: query parameter n must be a whole number", q)
        self.assertEqual(self.client.get("/nope").status_code, 404)


if __name__ == "__main__":
    unittest.main()
