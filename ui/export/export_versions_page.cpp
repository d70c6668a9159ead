#include "ui/export/export_versions_page.h"

#include <QComboBox>
#include <QFrame>
#include <QLabel>
#include <QScrollArea>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include "ui/export/export_wizard.h"

namespace nova::ui {
namespace {
constexpr int kPyTorch = -1;  // the combo entry of a group that stays PyTorch
}

ExportVersionsPage::ExportVersionsPage(ExportWizard& wizard) : wizard_(wizard) {
  setTitle(tr("Versions"));
  setSubTitle(tr("Which version of each fusion group ships. Pre-selected as the export would ship it: "
                 "your choice for export, else the selection policy's (the fastest version that passed "
                 "validation and beats eager beyond the noise)."));
  auto* outer = new QVBoxLayout(this);
  summary_ = new QLabel(this);
  summary_->setTextFormat(Qt::RichText);
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  outer->addWidget(summary_);
  auto* scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  auto* inner = new QWidget(scroll);
  auto* layout = new QVBoxLayout(inner);
  layout->setContentsMargins(0, 0, 8, 0);
  for (int i = 0; i < static_cast<int>(wizard_.choices().groups().size()); ++i) addGroup(layout, i);
  layout->addStretch();
  scroll->setWidget(inner);
  outer->addWidget(scroll, 1);
  const auto& groups = wizard_.choices().groups();
  if (!wizard_.problem().isEmpty())
    summary_->setText(tr("<b>This project cannot be exported:</b> %1").arg(wizard_.problem().toHtmlEscaped()));
  else
    summary_->setText(tr("%1 of %2 fusion groups ship a kernel; the others run the client's original PyTorch.")
                          .arg(wizard_.choices().shipping())
                          .arg(groups.size()));
}

void ExportVersionsPage::addGroup(QVBoxLayout* layout, int index) {
  const ExportChoices::Group& g = wizard_.choices().groups()[index];
  auto* title = new QLabel(tr("<b>Group %1</b> · %2").arg(g.id).arg(QString::fromStdString(g.kind).toHtmlEscaped()));
  auto* combo = new QComboBox;
  combo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  auto* model = qobject_cast<QStandardItemModel*>(combo->model());
  QStringList refused;
  if (!g.selected) combo->addItem(tr("PyTorch (the client's original code)"), kPyTorch);
  for (const auto& v : g.versions) {
    const QString label = QString::fromStdString(v.label);
    combo->addItem(label, QVariant::fromValue<qlonglong>(v.id));
    if (v.problem.empty()) continue;
    const QString why = QString::fromStdString(v.problem);
    QStandardItem* item = model->item(combo->count() - 1);
    item->setFlags(item->flags() & ~Qt::ItemIsEnabled);
    item->setToolTip(tr("Cannot ship: %1").arg(why));
    refused << tr("v%1: %2").arg(v.id).arg(why.toHtmlEscaped());
  }
  if (g.selected) combo->setCurrentIndex(combo->findData(QVariant::fromValue<qlonglong>(*g.selected)));
  combo->setToolTip(g.selected ? tr("The version that ships for group %1").arg(g.id)
                               : tr("No version of group %1 can ship: it stays PyTorch").arg(g.id));
  auto* reason = new QLabel;
  reason->setTextFormat(Qt::RichText);
  reason->setWordWrap(true);
  reason->setTextInteractionFlags(Qt::TextSelectableByMouse);
  reason->setText((g.selected ? tr("Ships: %1") : tr("Stays PyTorch: %1")).arg(QString::fromStdString(g.reason).toHtmlEscaped()));
  auto* cannot = new QLabel;
  cannot->setTextFormat(Qt::RichText);
  cannot->setWordWrap(true);
  cannot->setTextInteractionFlags(Qt::TextSelectableByMouse);
  cannot->setStyleSheet("color: palette(mid);");
  cannot->setText(tr("Cannot be chosen: %1").arg(refused.join("; ")));
  cannot->setVisible(!refused.isEmpty());
  auto* row = new QHBoxLayout;
  row->addWidget(title);
  row->addWidget(combo, 1);
  layout->addLayout(row);
  layout->addWidget(reason);
  layout->addWidget(cannot);
  auto* line = new QFrame;
  line->setFrameShape(QFrame::HLine);
  line->setFrameShadow(QFrame::Sunken);
  layout->addWidget(line);
  combos_[g.id] = combo;
  reasons_[g.id] = reason;
  connect(combo, &QComboBox::currentIndexChanged, this, [this, index](int row) { chosen(index, row); });
}

void ExportVersionsPage::chosen(int index, int row) {
  ExportChoices::Group& g = wizard_.choices().groups()[index];
  QComboBox* combo = combos_.at(g.id);
  QLabel* reason = reasons_.at(g.id);
  const qlonglong id = combo->itemData(row).toLongLong();
  if (id == kPyTorch) return;
  if (!wizard_.choices().select(g.id, id)) {
    // A disabled entry chosen anyway (by keyboard or program): refused, the previous one restored.
    const ExportChoices::Version* v = g.version(id);
    const QSignalBlocker block(combo);
    combo->setCurrentIndex(g.selected ? combo->findData(QVariant::fromValue<qlonglong>(*g.selected)) : 0);
    reason->setText(tr("<span style='color:#b00020'>v%1 cannot be exported: %2.</span> %3")
                        .arg(id)
                        .arg(v ? QString::fromStdString(v->problem).toHtmlEscaped() : tr("unknown version"))
                        .arg(g.selected ? tr("v%1 still ships.").arg(*g.selected) : tr("The group stays PyTorch.")));
    return;
  }
  reason->setText(g.selected == g.planned
                      ? tr("Ships: %1").arg(QString::fromStdString(g.reason).toHtmlEscaped())
                      : tr("Ships: your choice in this wizard (stored as the group's choice for export when "
                           "the export starts)."));
}

QComboBox* ExportVersionsPage::combo(int groupId) const {
  auto it = combos_.find(groupId);
  return it == combos_.end() ? nullptr : it->second;
}

QLabel* ExportVersionsPage::reasonLabel(int groupId) const {
  auto it = reasons_.find(groupId);
  return it == reasons_.end() ? nullptr : it->second;
}

bool ExportVersionsPage::isComplete() const { return wizard_.problem().isEmpty() && wizard_.choices().shipping() > 0; }

}  // namespace nova::ui
