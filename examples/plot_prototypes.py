"""
Prototypes: representative points under the forest's proximity
===============================================================

``PrototypeExplainer`` picks a few training points per class that represent the data as
the ensemble sees it (Tan et al., tree-space prototypes): two points are close when they
share leaves in many trees. Here on scikit-learn's 8 x 8 digits, where a prototype is an
image one can look at.
"""

import numpy as np
from matplotlib.figure import Figure
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split

from defrag import PrototypeExplainer

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)
forest = RandomForestClassifier(n_estimators=100, random_state=0).fit(X_train, y_train)

# %%
# Twenty prototypes by greedy submodular selection ("sm-a") under the random-forest
# proximity; a nearest-prototype classifier is then a test of how representative they
# are (``score`` is its balanced accuracy).
protos = PrototypeExplainer(forest, n_prototypes=20, method="sm-a", random_state=0)
protos.fit(X_train, y_train)
print("prototypes (training rows):", protos.prototypes_)
print("their classes:             ", protos.prototype_labels_)
print(f"nearest-prototype balanced accuracy: {protos.score(X_test, y_test):.3f}")

# %%
# The prototypes as images, in the order they were chosen.
fig = Figure(figsize=(8, 2.2))
for k, row in enumerate(protos.prototypes_):
    ax = fig.add_subplot(2, 10, k + 1)
    ax.imshow(X_train[row].reshape(8, 8), cmap="gray_r")
    ax.set_title(str(protos.prototype_labels_[k]), fontsize=9)
    ax.set_axis_off()

# %%
# The prototypes nearest to a test point, with their distances.
rows, labels, distances = protos.explain(X_test[0])
print(f"test point of class {y_test[0]}: prototypes {rows} of classes {labels}, "
      f"distances {np.round(distances, 2)}")

# %%
# Supervised greedy selection ("sg") against the submodular methods, by the number of
# prototypes.
for method in ("sm-a", "sm-u", "sg"):
    scores = [PrototypeExplainer(forest, n_prototypes=k, method=method, random_state=0)
              .fit(X_train, y_train).score(X_test, y_test) for k in (10, 20, 40)]
    print(method, np.round(scores, 3))
